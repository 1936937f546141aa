/**
 * Port for address take-over claims (issue 22; migration 017): a link mailed to an address that an
 * account holds without having verified it. Whoever opens it proves they read that address's mail
 * and takes the address. Times are epoch milliseconds.
 */

export interface EmailClaimRecord {
  /** SHA-256 (hex) of the token; the token itself is only in the mail. */
  tokenHash: string;
  /** The address claimed (normalized). */
  email: string;
  /** A sign-up's new account, made only when the link is used: its password hash and display name. */
  signUp: { passwordHash: string; displayName: string };
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export interface EmailClaimsRepo {
  create(claim: Omit<EmailClaimRecord, 'usedAt'>): Promise<void>;
  /** A live claim (unused, unexpired at `now`) without using it: what the page behind the link shows. */
  peek(tokenHash: string, now: number): Promise<EmailClaimRecord | undefined>;
  /**
   * Marks the claim used and returns it, if unused and unexpired at `now`. One UPDATE ... WHERE
   * used_at IS NULL ... RETURNING: of concurrent callers on any number of nodes exactly one gets it.
   */
  consume(tokenHash: string, now: number): Promise<EmailClaimRecord | undefined>;
  /** Deletes claims that expired before `before` (used or not). */
  purgeExpired(before: number): Promise<number>;
}
