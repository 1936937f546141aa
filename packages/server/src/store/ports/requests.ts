import type { AgentApprovalDetails, ApprovalDetails } from '@mandate/protocol';
import type { OidcRequestContext } from './oidc.ts';

/** Access and step-up requests (the `txn_id` of the interface). Times are epoch ms. */

export type RequestKind = 'initial' | 'stepup' | 'agent_approval' | 'plan';

/** What an agent approval (`agent_approval`, decisions §19) describes: one definition in @mandate/protocol. */
export type { AgentApprovalDetails } from '@mandate/protocol';

export type RequestStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'consumed';

/** An access request (`initial`) or a step-up request (`stepup`): the `txn_id` of the interface. */
export interface AuthzRequestRecord {
  id: string;
  kind: RequestKind;
  agentId: string;
  userId: string;
  site: string;
  scopes: string[];
  userInfo: string[];
  action: string | null;
  status: RequestStatus;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  grantId: string | null;
  /** Set when the OIDC provider filed the request for a sign-in: what the owner's card shows. */
  oidc: OidcRequestContext | null;
  /** Agent approvals (`agent_approval`) only: the normalized details (migration 021). */
  details?: AgentApprovalDetails | null;
  /**
   * Step-ups and agent approvals only, when the agent sent them (decisions §29, migration 030): the
   * details the approval is bound to, `{summary, digest}`. The card shows the summary as written,
   * the passkey challenge and the step-up token carry the digest. Absent: not bound to details.
   */
  boundDetails?: ApprovalDetails | null;
  /**
   * `site` for a step-up the site filed with the agent's pass (POST /api/v1/stepup/site, decisions
   * §28, migration 032): only that site polls it and reads its receipt, and the card says the site
   * asks. Absent: the agent filed it.
   */
  filedBy?: 'site';
}

export interface AuthzRequestsRepo {
  /** Inserts; returns false when an access request for that agent and site is already pending. */
  create(request: AuthzRequestRecord): Promise<boolean>;
  byId(id: string): Promise<AuthzRequestRecord | undefined>;
  /** Marks pending requests past their expiry as `expired` (all, or those of one agent and site); answers those it marked. */
  expireStale(now: number, scope?: { agentId: string; site: string }): Promise<AuthzRequestRecord[]>;
  /** Open (pending, unexpired) requests for the owner's agents, newest first; at most `limit` when given. */
  listPendingForUser(userId: string, now: number, limit?: number): Promise<AuthzRequestRecord[]>;
  /**
   * Compare-and-set of the status: moves the request to `to` only if its status is one of `from`
   * (and, when `from` includes `pending`, only if it has not expired). Of concurrent callers exactly
   * one gets the updated record; the others get undefined.
   */
  transition(id: string, from: RequestStatus[], to: RequestStatus, now: number, patch?: { grantId?: string }): Promise<AuthzRequestRecord | undefined>;
  /**
   * Every request of the owner's agents, whatever its status, `limit` at a time in id order after
   * `afterId` ('' for the first page): the data export reads them page by page.
   */
  pageForUser(userId: string, afterId: string, limit: number): Promise<AuthzRequestRecord[]>;
  /** Requests of one agent and kind that moved to `status` at or after `since` (approval modes: recent denials). */
  decidedSince(agentId: string, kind: RequestKind, status: RequestStatus, since: number): Promise<AuthzRequestRecord[]>;
  /** Ends every pending request of an agent (it was removed or revoked); returns how many. */
  cancelPendingForAgent(agentId: string, now: number): Promise<number>;
  /**
   * Deletes requests that are no longer pending (answered, expired, consumed) and expired before
   * `before`; a pending row is never deleted, even past its expiry (it is first marked expired, with
   * its activity record). Answers how many went.
   */
  purgeEnded(before: number): Promise<number>;
}
