/**
 * Ports for take-overs (decisions §21): the owner steers the agent's browser for a while. A session
 * row holds who, where and why, the SHA-256 of the agent's relay token (the token itself is only in
 * the agent's answer), its state, and the internal address of the node that relays it (so a node
 * holding the other end forwards there). Frames never come here. Times are epoch milliseconds.
 */

export type TakeoverState = 'open' | 'done' | 'cancelled' | 'expired' | 'agent_left';

export interface TakeoverRecord {
  id: string;
  agentId: string;
  userId: string;
  url: string;
  reason: string;
  /** SHA-256 (hex) of the agent's relay token. */
  tokenHash: string;
  state: TakeoverState;
  /** NODE_INTERNAL_URL of the node that pairs the two ends, or null (none has connected yet). */
  relayNode: string | null;
  createdAt: number;
  expiresAt: number;
  endedAt: number | null;
}

export type TakeoverReportKind = 'shadow_dom' | 'bot_detection' | 'input_not_detected' | 'takeover_failed' | 'handback_failed' | 'session_not_cleared' | 'other';

export interface TakeoverReportRecord {
  id: string;
  agentId: string;
  userId: string;
  site: string;
  kind: TakeoverReportKind;
  detail: string | null;
  url: string | null;
  createdAt: number;
}

export interface TakeoversRepo {
  /**
   * Opens a session unless the agent already has an open, unexpired one: the agent's open sessions
   * that expired by `now` are marked `expired` first, then the insert is a no-op on the unique
   * index of open sessions per agent, so of racing callers exactly one gets true.
   */
  open(t: Omit<TakeoverRecord, 'state' | 'relayNode' | 'endedAt'>, now: number): Promise<boolean>;
  byId(id: string): Promise<TakeoverRecord | undefined>;
  /** The owner's sessions that are open and unexpired at `now`, newest first. */
  activeForUser(userId: string, now: number): Promise<TakeoverRecord[]>;
  /** Ends the session with `state` if it is still open: one conditional UPDATE, exactly one racing caller wins. */
  end(id: string, state: Exclude<TakeoverState, 'open'>, now: number): Promise<boolean>;
  /**
   * Makes `node` the session's relay node unless one is recorded already, and answers the one that
   * is (so of racing nodes all agree on the first); undefined when the session is not open.
   */
  claimRelayNode(id: string, node: string): Promise<string | undefined>;
  /** Moves the relay from `from` (unreachable) to `to`, if it is still `from`: one compare-and-set. */
  moveRelayNode(id: string, from: string, to: string): Promise<boolean>;
  /** The state of each listed session that still exists (the relay's check of the pairs it holds). */
  statesOf(ids: readonly string[]): Promise<Map<string, TakeoverState>>;
  /** Open sessions whose time ran out by `now` (the caller ends them and tells the owner). */
  expiredOpen(now: number, limit: number): Promise<TakeoverRecord[]>;
  addReport(r: TakeoverReportRecord): Promise<void>;
  /** The owner's reports, newest first. */
  reportsForUser(userId: string, limit: number): Promise<TakeoverReportRecord[]>;
  /** Deletes sessions whose time ran out before `before` (housekeeping); answers how many. */
  purgeBefore(before: number): Promise<number>;
  /** Account deletion: the owner's sessions and reports. */
  deleteForUser(userId: string): Promise<number>;
}
