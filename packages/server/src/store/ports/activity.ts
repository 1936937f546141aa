/** The owner's audit trail (Activity). Times are epoch ms. */

export interface ActivityRecord {
  /**
   * The owner's own sequence number: 1, 2, 3... per owner, assigned in the same transaction as the
   * record, so a rolled-back or interrupted write leaves no gap and a missing number means a
   * missing record.
   */
  seq: number;
  userId: string;
  agentId: string | null;
  site: string | null;
  action: string;
  detail: Record<string, unknown>;
  ip: string | null;
  createdAt: number;
}

export interface ActivityQuery {
  /** Only records with a smaller sequence number; 0 = from the newest. */
  before: number;
  limit: number;
  agentId?: string;
  site?: string;
  action?: string;
}

export interface ActivityRepo {
  /** Appends with the owner's next sequence number (returned); atomic on its own or inside a transaction. */
  add(record: Omit<ActivityRecord, 'seq'>): Promise<number>;
  /** Newest first. */
  list(userId: string, query: ActivityQuery): Promise<ActivityRecord[]>;
  /**
   * Account deletion: every record of the owner keeps `seq`, `action`, `createdAt`, agent and site
   * ids, and loses its IP address and free-text detail (`ip` null, `detail` {}). Answers how many.
   */
  anonymiseForUser(userId: string): Promise<number>;
}
