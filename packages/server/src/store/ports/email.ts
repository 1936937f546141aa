/**
 * Ports for the links Mandate mails to owners (decisions §25): email verification, and undoing a
 * first passkey added while only the password was used. Times are epoch milliseconds.
 */

/** What a mailed link does. */
/** `reset_password`: choose a new password (domain/accounts/password-reset.ts), 1 hour. */
export type EmailTokenPurpose = 'verify_email' | 'undo_passkey' | 'reset_password';

export interface EmailTokenRecord {
  /** SHA-256 (hex) of the token; the token itself is only in the mail. */
  tokenHash: string;
  purpose: EmailTokenPurpose;
  userId: string;
  /** The address the link was mailed to: a verification counts only while it is still the account's. */
  email: string;
  /** What the link is about: the passkey's id for `undo_passkey`; null otherwise. */
  subject: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export interface EmailTokensRepo {
  create(token: Omit<EmailTokenRecord, 'usedAt'>): Promise<void>;
  /**
   * A live link (unused, unexpired at `now`) without using it: what the page behind the link shows
   * before the person confirms. Mail scanners open links; only `consume` acts.
   */
  peek(tokenHash: string, purpose: EmailTokenPurpose, now: number): Promise<EmailTokenRecord | undefined>;
  /**
   * Marks the link used and returns it, if it has that purpose, is unused and unexpired at `now`
   * and, when `sameEmail`, was sent to the address its account has now. One UPDATE ... WHERE
   * used_at IS NULL ... RETURNING: of N concurrent callers on any number of nodes exactly one gets it.
   */
  consume(tokenHash: string, purpose: EmailTokenPurpose, now: number, opts: { sameEmail: boolean }): Promise<EmailTokenRecord | undefined>;
  /** Ends the account's unused links of `purpose` (the address changed); answers how many. */
  revokeForUser(userId: string, purpose: EmailTokenPurpose, now: number): Promise<number>;
  /** Deletes links that expired before `before` (used or not). */
  purgeExpired(before: number): Promise<number>;
  /** Deletes every link of the account, used or not (account deletion); answers how many. */
  deleteForUser(userId: string): Promise<number>;
}
