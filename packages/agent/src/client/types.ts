/** Shapes of the service's answers to agents (docs/reference/api.md), as the SDK hands them on. */

export type RequestStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'consumed';

/** `POST /api/v1/authz-requests` and `POST /api/v1/stepup`. */
export type CreatedRequest = {
  txnId: string;
  /** Seconds the owner has to answer (300). */
  expiresIn: number;
  /** Epoch ms by the SDK's clock. */
  expiresAt: number;
};

/** `GET /api/v1/authz-requests/{txn_id}`. */
export type PollAnswer = {
  status: RequestStatus;
  kind: string;
  agent: string;
  site: string;
  scopes: string[];
  user_info: string[];
  action?: string;
  stepup_token?: string;
  stepup_token_error?: string;
};

/** `POST /api/v1/token`. */
export type TokenAnswer = {
  access_token: string;
  token_type: 'DPoP';
  expires_in: number;
  refresh_token: string;
  scope: string[];
  grant_expires_at: string | null;
  grant_uses_left: number | null;
};

/** `GET /api/v1/agent-status`. */
export type AgentStatus = {
  agent_id: string;
  global_flag: 'ok' | 'suspicious' | 'revoked';
  revoked_sites: string[];
  jwks_url: string;
  /**
   * Whether the agent may use its password manager (decisions §17): `off` while its browser runs on
   * its operator's computers and its owner has not turned it on. Absent from services older than the
   * switch, which had no operator-run browsers: read as not restricted.
   */
  password_manager?: 'on' | 'off' | 'not_applicable';
};
