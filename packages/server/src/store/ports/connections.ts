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

export interface ConnectionsRepo {
  /**
   * Inserts `c` unless the person already has a live connection to that operator; answers the live
   * connection either way (of racing callers, one inserts and all answer the same row).
   */
  createOrLive(c: ConnectionRecord): Promise<ConnectionRecord>;
  byId(id: string): Promise<ConnectionRecord | undefined>;
  /** Ends an `active` connection (status `removed`, `ended_at`); false when it was not active. */
  end(id: string, now: number): Promise<boolean>;
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
