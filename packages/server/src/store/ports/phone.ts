/**
 * Ports for the owner's phone and account recovery (decisions §14): the one-time codes sent by SMS
 * (to verify a number, or to start a recovery) and the owner's one-time recovery codes. Only hashes
 * are stored. Times are epoch milliseconds.
 */

/** What an SMS code is for. */
export type PhoneCodePurpose = 'verify_phone' | 'recovery';

export interface PhoneCodeRecord {
  id: string;
  /** The account; null for a recovery start that matched no account (written so both paths do the same work). */
  userId: string | null;
  purpose: PhoneCodePurpose;
  /** The E.164 number the code went to. */
  phone: string;
  /** SHA-256 (hex) of `<id>:<code>`; the code itself is only in the SMS. */
  codeHash: string;
  /** Tries left; a code at 0 is void. */
  attemptsLeft: number;
  createdAt: number;
  expiresAt: number;
  /** Used (verified), voided (a newer code, an unlinked phone) or spent: no longer usable. */
  usedAt: number | null;
}

export interface PhoneCodesRepo {
  create(code: Omit<PhoneCodeRecord, 'usedAt'>): Promise<void>;
  /** The account's newest live code of `purpose` (unused, unexpired at `now`, tries left), or undefined. */
  live(userId: string, purpose: PhoneCodePurpose, now: number): Promise<PhoneCodeRecord | undefined>;
  /**
   * Takes one try of the code: `attempts_left = attempts_left - 1` only while it is live and has
   * tries left, in one UPDATE ... RETURNING, so racing guesses all count and never exceed the limit.
   * Answers the code after the decrement (attemptsLeft 0: this was its last try), or undefined when
   * no try was left.
   */
  takeAttempt(id: string, now: number): Promise<PhoneCodeRecord | undefined>;
  /**
   * Marks the code used, if it is still unused and unexpired at `now`: one conditional UPDATE, so of
   * racing callers exactly one gets true.
   */
  consume(id: string, now: number): Promise<boolean>;
  /** Ends the account's unused codes of `purpose` (a newer one was sent, the phone was unlinked); answers how many. */
  revokeForUser(userId: string, purpose: PhoneCodePurpose, now: number): Promise<number>;
  /** Deletes codes that expired before `before`. */
  purgeExpired(before: number): Promise<number>;
  /** Deletes every code of the account (account deletion). */
  deleteForUser(userId: string): Promise<number>;
}

export interface RecoveryCodeRecord {
  userId: string;
  /** SHA-256 (hex) of `<userId>:<normalised code>`. */
  codeHash: string;
  createdAt: number;
  usedAt: number | null;
}

export interface RecoveryCodesRepo {
  /** Replaces the account's whole set (the old codes stop working) with `hashes`, in the caller's transaction. */
  replace(userId: string, hashes: readonly string[], at: number): Promise<void>;
  /** Whether the account has this unused code (without using it). */
  has(userId: string, codeHash: string): Promise<boolean>;
  /** Marks the code used if it is the account's and unused: one conditional UPDATE; of racing callers one gets true. */
  consume(userId: string, codeHash: string, at: number): Promise<boolean>;
  /** How many unused codes the account has left. */
  countUnused(userId: string): Promise<number>;
  /** Deletes every code of the account (account deletion). */
  deleteForUser(userId: string): Promise<number>;
}
