/**
 * Ports for operators (decisions §17): companies that create agents for many users. The secret is
 * held only as a SHA-256; the verification token is public (it proves control of the domain).
 * Times are epoch milliseconds.
 */

/** `pending` until an admin first switches it on; then `active` (on) or `disabled` (off). */
export type OperatorStatus = 'pending' | 'active' | 'disabled';

/** Where its agents' browser runs: on the operator's computers, or on the user's own machine. */
export type OperatorBrowser = 'operator' | 'user';

export interface OperatorRecord {
  id: string;
  /** The signed-in person who registered it. */
  userId: string;
  name: string;
  /** `host[:port]` shared by every redirect URI (lower case). */
  domain: string;
  redirectUris: string[];
  browser: OperatorBrowser;
  /** SHA-256 (hex) of the current secret. */
  secretHash: string;
  secretSetAt: number;
  status: OperatorStatus;
  verificationToken: string;
  verifiedAt: number | null;
  /** The admin's last switch, or null while never switched. */
  statusChangedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** What ties an agent to the operator that created it (set when the operator API creates one). */
export interface OperatorAgentLink {
  operatorId: string;
  connectionId: string;
  browser: OperatorBrowser;
}

/** The operator that made an owner's agent, as the owner's agent list shows it. */
export interface AgentOperator {
  operatorId: string;
  name: string;
  connectionId: string;
}

export interface OperatorsRepo {
  create(o: OperatorRecord): Promise<void>;
  byId(id: string): Promise<OperatorRecord | undefined>;
  /** The person's operators, oldest first. */
  listForUser(userId: string): Promise<OperatorRecord[]>;
  /** Every operator, newest first, at most `limit` (the admin list). */
  listAll(limit: number): Promise<OperatorRecord[]>;
  countForUser(userId: string): Promise<number>;
  /** Every operator whose domain is exactly `domain` (lower-case host[:port]), oldest first (the readiness check, decisions §22). */
  listForDomain(domain: string): Promise<OperatorRecord[]>;
  /** Replaces the secret hash of the person's operator; false when there is no such operator of theirs. */
  replaceSecret(userId: string, id: string, secretHash: string, now: number): Promise<boolean>;
  /** Records a successful domain check; answers the updated record (undefined when it is gone). */
  markVerified(id: string, now: number): Promise<OperatorRecord | undefined>;
  /** Sets `status` to `to` if it is one of `from` (a compare-and-set: of racing switches one wins). */
  switchStatus(id: string, from: readonly OperatorStatus[], to: OperatorStatus, now: number): Promise<boolean>;
  /** Ties an agent to an operator and connection (operator-created agents). */
  attachAgent(agentId: string, link: OperatorAgentLink): Promise<void>;
  /** The operators of the owner's operator-made agents (removed ones too), by agent id, in one read. */
  agentOperatorsOfOwner(userId: string): Promise<Map<string, AgentOperator>>;
  /**
   * The operator switch's off: every `active` or `suspended` agent the operator created becomes
   * `blocked`, marked with `revSeq` and `now` (a suspension is dropped: the on applies the limits
   * again). Removed agents stay removed. Answers the ids blocked.
   */
  blockAgents(operatorId: string, revSeq: number, now: number): Promise<string[]>;
  /**
   * The switch's on: exactly the agents an off blocked (status `blocked` with the operator's mark)
   * become `active` again; each records the lift (`unblocked_at` = now, `unblocked_rev_seq` = the
   * block's rev_seq), so the revocation list goes on refusing passes minted before the block for one
   * pass lifetime. Answers the ids unblocked.
   */
  unblockAgents(operatorId: string, now: number): Promise<string[]>;
  /** Account deletion: the person's operators, and the connections they made or that were made to them; answers the operators' ids. */
  deleteForUser(userId: string): Promise<string[]>;
}
