// The JSON shapes of the owner API this app reads (see GET /openapi.json). Kept here, not imported
// from the server: the app is a client of the public API like any other.

import type { AgentApprovalDetails } from '@mandate/protocol';

export type { AgentApprovalDetails };

export type RequestKind = 'initial' | 'stepup' | 'agent_approval';
export type AgentFlag = 'ok' | 'suspicious' | 'revoked';

/** What makes an open request an OIDC sign-in: the site (client) the agent signs in to, and how. */
export interface SignInRequest {
  client_id: string;
  client_name: string;
  /** The client proved it runs the redirect URI's site (decisions §18); false: "unverified site". */
  verified: boolean;
  /** `authorize`: the agent went to /oidc/authorize; `ciba`: the site asked (POST /oidc/bc-authorize). */
  flow: 'authorize' | 'ciba' | string;
  /** CIBA: what the site shows too, to be shown exactly as written. */
  binding_message: string | null;
}

/** An open request for one of the owner's agents (`pending` of GET /api/me). */
export interface PendingRequest {
  id: string;
  kind: RequestKind | string;
  agent: string;
  agent_id: string;
  site: string;
  scopes: string[];
  user_info: string[];
  action?: string;
  /** `site` when the site asks (a site step-up) rather than the agent. */
  filed_by?: 'site';
  /** Present when the agent is a connected app (decisions §28): a site step-up is then one call of a tool. */
  app?: PendingApp;
  /** Only for an OIDC sign-in (kind `initial`; `scopes` are the OIDC scopes). */
  sign_in?: SignInRequest;
  /**
   * Agent approvals: what the agent read on the page. Step-ups and agent approvals bound to details
   * (decisions §29): `summary` (shown as written) and `digest`.
   */
  details?: AgentApprovalDetails;
  category?: string;
  created_at: string;
  expires_at: string;
}

/** The connected app a request is for: who it is, and the resource its pass is for. */
export interface PendingApp {
  client_id: string;
  /** The client_id's host (a metadata document URL); null for a registered client id (`c_`, `rc_`). */
  client_host: string | null;
  /** The resource URL of the grant the call runs under; null when the service could not tell. */
  resource: string | null;
}

/** A live OIDC sign-in standing on a grant: it ends when the grant is revoked. */
export interface GrantSignIn {
  client_id: string;
  client_name: string;
  created_at: string;
  expires_at: string;
}

export interface Grant {
  id: string;
  agent_id: string;
  agent_name: string;
  site: string;
  scopes: string[];
  user_info: string[];
  expires_at: string | null;
  uses_left: number | null;
  created_at: string;
  /** The live OIDC sign-ins of this agent at this site (empty when none): revoking ends them. */
  sign_ins: GrantSignIn[];
  /** A connected app's grant: the resource URL it is for (`site` is its host). Null or missing otherwise. */
  resource?: string | null;
}

export interface Me {
  id: string;
  email: string;
  display_name: string;
  role: 'user' | 'admin';
  /**
   * The owner proved the address by the link mailed to it (decisions §25). Until then it is not
   * shared with sites and gives no admin role. Missing from older services: the app then says nothing.
   */
  email_verified?: boolean;
  created_at: string;
  pending: PendingRequest[];
  grants: Grant[];
  /** Unread rows of the notifications inbox (the bell). */
  unread_notifications?: number;
  /** How this session was made, when the service says so (otherwise the app remembers it: device.ts). */
  session_method?: 'password' | 'passkey' | 'recovery' | 'oauth';
  /** The verified phone, masked (`+1 ••• ••• 0123`); null when none. */
  phone?: string | null;
  phone_verified?: boolean;
}

/** POST /api/email/send: the link went to `to` and is valid `expires_in` seconds. */
export interface EmailSent {
  sent: boolean;
  to: string;
  expires_in: number;
}

/**
 * Decisions §17: `blocked` while its operator is switched off by an admin; `suspended` while the
 * owner's agent limit for its connection is below the operator's number of agents (the newest beyond it).
 */
export type AgentState = 'active' | 'removed' | 'blocked' | 'suspended';

/** The operator that made an agent, and the owner's connection to it. */
export interface AgentOperator {
  id: string;
  name: string;
  connection_id: string;
}

/** `agent`: holds a key. `app`: an MCP client or other OAuth app the owner approved in the browser (decisions §28), keyless. */
export type AgentKind = 'agent' | 'app';

export interface Agent {
  id: string;
  name: string;
  /** Missing from services older than connected apps: an agent. */
  kind?: AgentKind;
  /** Apps only: the OAuth client_id (a `c_`/`rc_` id or a metadata document URL). */
  client_id?: string | null;
  /** Apps only: the client_id's host when it is a URL; null for a registered client id. */
  client_host?: string | null;
  status: AgentState;
  flag: AgentFlag;
  /** Null for an app (it has no key). */
  jkt: string | null;
  /** Decisions §17: `off`/`on` only for an agent whose browser runs on its operator's computers. */
  password_manager: 'on' | 'off' | 'not_applicable';
  /** Null for an agent the owner added; missing from services older than operator connections. */
  operator?: AgentOperator | null;
  created_at: string;
}

/** One agent an operator made over a connection. */
export interface ConnectionAgent {
  id: string;
  name: string;
  status: AgentState;
  created_at: string;
}

/** GET /api/connections: the owner's consent to one operator (`removed` = ended, for good). */
export interface Connection {
  id: string;
  operator: { id: string; name: string; domain: string };
  status: 'active' | 'removed' | 'blocked' | 'suspended';
  /** How many agents the operator may have for the owner (0 to 50). */
  max_agents: number;
  agents: ConnectionAgent[];
  created_at: string;
}

/** GET /api/v1/agents/{id}/status: what sites read. */
export interface AgentStatus {
  agent_id: string;
  global_flag: AgentFlag;
  revoked_sites: string[];
}

/** GET /api/v1/agents/{id}/reputation. */
export interface Reputation {
  agent_id: string;
  score: number;
  flag: AgentFlag;
  age_days: number;
  reports: Record<string, number>;
  reporting_sites: number;
}

/** GET /api/agents/{id}/statuses: what the agent itself reported, per site ('' = general). */
export interface ReportedStatus {
  site: string;
  status: string;
  reported_at: string;
}

/** A passkey approves; a web-push subscription (`webpush`) or the Android app (`fcm`) notifies. */
export type DeviceKind = 'passkey' | 'webpush' | 'fcm';

export interface Device {
  id: string;
  name: string;
  kind: DeviceKind | string;
  created_at: string;
  last_used_at: string | null;
  /** A notifying device its push service kept refusing: not tried until then. */
  paused_until?: string | null;
}

export interface ActivityItem {
  seq: number;
  action: string;
  agent_id: string | null;
  agent_name: string | null;
  site: string | null;
  detail: Record<string, unknown>;
  created_at: string;
}

export interface ActivityPage {
  items: ActivityItem[];
  next_before: number | null;
}

export type InboxType = 'approval' | 'note' | 'agent_added' | 'takeover' | 'auto_approved' | 'security';

/** One row of the notifications inbox (GET /api/notifications). */
export interface InboxItem {
  id: string;
  seq: number;
  type: InboxType | string;
  title: string;
  body: string;
  created_at: string;
  read_at: string | null;
  txn_id?: string;
  /** With `txn_id`: how that request stands now (GET /api/notifications `request_status`). */
  request_status?: 'pending' | 'approved' | 'denied' | 'expired' | 'ended';
  takeover_id?: string;
}

export interface InboxPage {
  items: InboxItem[];
  next_before: number | null;
  unread: number;
}

/** Local times "HH:MM" in the IANA time zone `tz`. */
export interface QuietHours {
  start: string;
  end: string;
  tz: string;
}

/** GET /api/settings/notifications. */
export interface NotifySettings {
  approvals: boolean;
  notes: boolean;
  session_notices: boolean;
  quiet_hours: QuietHours | null;
}

/** POST /api/push/test. */
export interface PushTestResult {
  sent: number;
  failed: number;
}

/** Where a site proves it is run by the client's owner: `line` in the file at each of `urls` (decisions §18). */
export interface SiteVerification {
  /** The first of `urls`. */
  url: string;
  /** One file per site (origin) of the redirect URIs; empty when all are development ones (http: loopback). */
  urls: string[];
  line: string;
}

/** One OIDC client of the owner (GET /api/oidc/clients). */
export interface OidcClient {
  client_id: string;
  name: string;
  redirect_uris: string[];
  backchannel_logout_uri: string | null;
  public: boolean;
  /** Every site of the redirect URIs held the line at the last check. */
  verified: boolean;
  verified_at: string | null;
  /** Sites (origins) that held the line at the last check: some may be verified while others are not. */
  verified_origins: string[];
  verification: SiteVerification;
  /** When the current secret was made; null for a public client. */
  secret_set_at: string | null;
  created_at: string;
}

/** POST /api/oidc/clients: the client, with its secret this once (confidential clients only). */
export interface OidcClientCreated extends OidcClient {
  client_secret?: string;
}
