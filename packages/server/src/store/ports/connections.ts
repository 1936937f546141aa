import type { AgentStatus } from './agents.ts';
import type { OperatorBrowser } from './operators.ts';

/**
 * Ports for operator connections and their authorization codes (decisions §17). A connection is a
 * person's consent to one operator (`cn_`), with the operator's pairwise `sub`; at most one is live
 * per operator and person (a unique index). Codes are held only as a SHA-256. Times are epoch ms.
 */

/** `active` while it lasts; `removed` once ended (by the person, the operator, or a reused code). */
export type ConnectionStatus = 'active' | 'removed' | 'blocked' | 'suspended';

export interface ConnectionRecord {
  id: string;
  operatorId: string;
  userId: string;
  /** The person as this operator knows them: pairwise per operator. */
  sub: string;
  maxAgents: number;
  status: ConnectionStatus;
  createdAt: number;
  endedAt: number | null;
}

/** A consent's code, as stored: what it is bound to, never the code itself. */
export interface OperatorCodeRecord {
  codeHash: string;
  operatorId: string;
  userId: string;
  redirectUri: string;
  /** The PKCE S256 challenge the consent was started with. */
  codeChallenge: string;
  expiresAt: number;
  usedAt: number | null;
  /** The connection its exchange answered (null until exchanged). */
  connectionId: string | null;
}

/** An agent an operator made through a connection, as the connection views read it (never its key). */
export interface ConnectionAgent {
  id: string;
  name: string;
  status: AgentStatus;
  browser: OperatorBrowser | null;
  operatorId: string;
  connectionId: string;
  createdAt: number;
}

/** Which agents a limit is applied to: one connection's, or those of every connection of an operator. */
export type LimitScope = { connectionId: string } | { operatorId: string };

export interface ConnectionsRepo {
  /**
   * Inserts `c` unless the person already has a live connection to that operator; answers the live
   * connection either way (of racing callers, one inserts and all answer the same row).
   */
  createOrLive(c: ConnectionRecord): Promise<ConnectionRecord>;
  byId(id: string): Promise<ConnectionRecord | undefined>;
  /** Ends an `active` connection (status `removed`, `ended_at`); false when it was not active. */
  end(id: string, now: number): Promise<boolean>;
  /** The person's connections, ended ones too, newest first, at most `limit`. */
  listForUser(userId: string, limit: number): Promise<ConnectionRecord[]>;
  /** The operator's connections, ended ones too, newest first, at most `limit`. */
  listForOperator(operatorId: string, limit: number): Promise<ConnectionRecord[]>;
  /** Sets the agent limit of an `active` connection; false when it is not active. */
  setMaxAgents(id: string, maxAgents: number): Promise<boolean>;
  /** The agents made through these connections, removed ones too, oldest first. */
  agentsOf(connectionIds: readonly string[]): Promise<ConnectionAgent[]>;
  /**
   * The operator's agents (only agents it made), removed ones too, oldest first, at most `limit`;
   * with `connectionId`, only that connection's.
   */
  operatorAgents(operatorId: string, connectionId: string | null, limit: number): Promise<ConnectionAgent[]>;
  /** The connection's live (not removed) agents, whatever their status: what `max_agents` bounds. */
  liveAgents(connectionId: string): Promise<number>;
  /**
   * The limit, down: every `active` agent of the scope with at least `max_agents` live agents of its
   * connection made before it (by created_at, then id) becomes `suspended`, marked with `revSeq` and
   * `now`; ONE statement. `blocked` agents are left to the operator switch (its on applies the limit
   * again). Answers the ids suspended.
   */
  suspendBeyond(scope: LimitScope, revSeq: number, now: number): Promise<string[]>;
  /**
   * The limit, up: every `suspended` agent of the connection with fewer than `max_agents` live agents
   * made before it becomes `active` (oldest first, up to the limit), recording the lift as an
   * unblock (`unblocked_at` = now, `unblocked_rev_seq` = the suspension's rev_seq), so passes minted
   * before the suspension stay refused. ONE statement. Answers the ids lifted.
   */
  liftWithin(connectionId: string, now: number): Promise<string[]>;
  saveCode(code: OperatorCodeRecord): Promise<void>;
  /**
   * Spends the code in ONE conditional UPDATE (unused and unexpired): of racing callers on any node
   * exactly one gets the record, the rest undefined.
   */
  spendCode(codeHash: string, now: number): Promise<OperatorCodeRecord | undefined>;
  /** The stored code, spent or not (to tell a reuse from a stranger). */
  codeByHash(codeHash: string): Promise<OperatorCodeRecord | undefined>;
  /** Records the connection a spent code's exchange answered. */
  linkCode(codeHash: string, connectionId: string): Promise<void>;
  /** Deletes codes that expired before `before` (housekeeping); answers how many. */
  purgeCodes(before: number): Promise<number>;
}
