import type { GrantRecord } from './grants.ts';
import type { OperatorBrowser } from './operators.ts';

/** Agents, and what cloud verify and the revocation list read of them. Times are epoch ms. */

/**
 * `blocked`: its operator was switched off (decisions §17); the switch's on makes it `active` again.
 * `suspended`: its owner lowered its connection's agent limit below the count (the newest beyond it);
 * raising the limit makes it `active` again. Both stop it as a removal does, but keep it.
 */
export type AgentStatus = 'active' | 'removed' | 'blocked' | 'suspended';

export type AgentFlag = 'ok' | 'suspicious' | 'revoked';

/**
 * `agent`: a program holding a key (agent JWTs, DPoP passes, pairing). `app`: an MCP client a person
 * approved in the browser at /oidc/authorize (decisions §28): no key, so it can never authenticate
 * as an agent; it holds grants for resources and is listed and revoked like every agent.
 */
export type AgentKind = 'agent' | 'app';

export type AgentPublicJwk = { kty: 'EC'; crv: 'P-256'; x: string; y: string };

export interface AgentRecord {
  id: string;
  userId: string;
  name: string;
  kind: AgentKind;
  /** An app's OAuth client_id (a `c_`/`rc_` id or a metadata document URL); null for agents. */
  clientId: string | null;
  /** The agent's key; null for an app, which has none (every key check fails closed on null). */
  publicJwk: AgentPublicJwk | null;
  /** RFC 7638 thumbprint of `publicJwk`; null for an app. */
  jkt: string | null;
  status: AgentStatus;
  flag: AgentFlag;
  /** The revocation sequence at which the current non-ok flag or removal took effect. */
  flagRevSeq: number | null;
  createdAt: number;
  removedAt: number | null;
  /** When a `revoked` flag was last lifted (to ok or suspicious), and the rev_seq of that block. */
  unblockedAt: number | null;
  unblockedRevSeq: number | null;
}

/**
 * An agent as the revocation list reads it (AgentsRepo.listRevoked), with its owner and when its
 * current non-ok flag was set (null while `ok`, or when unknown): the list's bound across accounts
 * (domain/revocation/revocation-bound.ts) drops blocks older than the window, fairly per owner.
 */
export type RevokedAgentRow = Pick<AgentRecord, 'id' | 'userId' | 'status' | 'flag' | 'flagRevSeq' | 'removedAt' | 'unblockedAt' | 'unblockedRevSeq'> & {
  flaggedAt: number | null;
  /** The rev_seq of the operator switch's block while `blocked` (migration 024), else null. */
  blockedRevSeq: number | null;
  /** The rev_seq of the owner's suspension while `suspended` (migration 027), else null. */
  suspendedRevSeq: number | null;
};

/** What AgentsRepo.update writes: `flaggedAt` is only read by the revocation list, so AgentRecord does not carry it. */
export type AgentPatch = Partial<Pick<AgentRecord, 'status' | 'flag' | 'flagRevSeq' | 'removedAt' | 'name' | 'unblockedAt' | 'unblockedRevSeq'> & { flaggedAt: number | null }>;

/** Why an agent is on the revocation list; each reason is read from an index of its own. */
export type RevokedAgentReason = 'flagged' | 'removed' | 'unblocked' | 'blocked' | 'suspended';

/** One page of AgentsRepo.listRevoked: at most `limit` rows of `reason` after the row `after`. */
export interface RevokedAgentPage {
  reason: RevokedAgentReason;
  after?: RevokedAgentRow;
  limit: number;
}

export interface AgentsRepo {
  create(agent: AgentRecord): Promise<void>;
  byId(id: string): Promise<AgentRecord | undefined>;
  /**
   * Stores `app` (kind `app`, with a clientId) unless the owner already has a live (not removed)
   * app of that client_id, and answers the one that is: the new one, or the one found. Of N
   * concurrent callers for one owner and client exactly one creates it (a unique index, migration 033).
   */
  createApp(app: AgentRecord): Promise<{ app: AgentRecord; created: boolean }>;
  /** The owner's live (not removed) app of `clientId`; undefined when none. */
  liveAppOf(userId: string, clientId: string): Promise<AgentRecord | undefined>;
  listForUser(userId: string, includeRemoved?: boolean): Promise<AgentRecord[]>;
  update(id: string, patch: AgentPatch): Promise<void>;
  /**
   * The agent part of the revocation list at `now` (decisions §25), for five reasons: live agents
   * with a non-ok flag (`flagged`, by id), agents blocked by their operator's switch (`blocked`, by
   * id) or suspended by their connection's limit (`suspended`, by id), and agents removed (`removed`, by removedAt, id) or
   * unblocked (`unblocked`, by unblockedAt, id) less than LISTED_FOR_MS (600 s + 120 s,
   * domain/revocation/revocation-window.ts) before `now`. With `page`, at most `page.limit` rows of
   * `page.reason` after the row `page.after` (keyset paging: a long list is read in steps); without,
   * all five, each agent once.
   */
  listRevoked(now: number, page?: RevokedAgentPage): Promise<RevokedAgentRow[]>;
  /**
   * The agent and, when it belongs to that agent, the grant `grantId`, read together in one query
   * (cloud verify's revocation read, once per request). `grant` is undefined when there is no such
   * grant or it is another agent's.
   */
  withGrant(agentId: string, grantId: string): Promise<AgentWithGrant | undefined>;
  /** `withGrant` for many pairs in ONE query; answers in the order asked. */
  withGrants(pairs: readonly { agentId: string; grantId: string }[]): Promise<(AgentWithGrant | undefined)[]>;
  /** Where the agent's browser runs and whether its password manager is on (migration 025); undefined for an unknown agent. */
  passwordManager(agentId: string): Promise<PasswordManagerSetting | undefined>;
  /** `passwordManager` of every agent of the owner (removed ones too), by agent id, in one read (the owner's agent list). */
  passwordManagersOfOwner(userId: string): Promise<Map<string, PasswordManagerSetting>>;
  /** Turns the agent's password manager on or off (the caller checked that it runs in an operator's browser). */
  setPasswordManager(agentId: string, enabled: boolean): Promise<void>;
}

/** `browser` null: an ordinary agent (not made by an operator). `enabled` is only read for `browser` = `operator`. */
export interface PasswordManagerSetting {
  browser: OperatorBrowser | null;
  enabled: boolean;
}

export type AgentWithGrant = { agent: AgentStanding; grant: GrantStanding | undefined };

/**
 * What cloud verify needs to know about a pass's agent (no key: the pass is already verified); with
 * the rev_seq of the last block lifted, so that passes minted before it stay refused after the lift.
 */
export type AgentStanding = Pick<AgentRecord, 'id' | 'name' | 'status' | 'flag' | 'unblockedRevSeq'>;

/** What cloud verify needs to know about a pass's grant (`resource`: the audience of an app's passes). */
export type GrantStanding = Pick<GrantRecord, 'id' | 'agentId' | 'site' | 'resource' | 'status'>;
