/** Owner accounts and their sign-in sessions. Times are epoch ms. */

export interface UserRecord {
  id: string;
  email: string;
  displayName: string;
  passwordHash: string;
  phone: string | null;
  phoneVerified: boolean;
  createdAt: number;
  /** Whether `email` was proven by a mailed link (decisions §25); false again once it changes. */
  emailVerified: boolean;
}

/** A new account: its email is never verified yet (only a mailed link verifies it). */
export type NewUserRecord = Omit<UserRecord, 'emailVerified'>;

export interface UsersRepo {
  /** Inserts; returns false (and writes nothing) when the email is taken. */
  create(user: NewUserRecord): Promise<boolean>;
  byId(id: string): Promise<UserRecord | undefined>;
  byEmail(email: string): Promise<UserRecord | undefined>;
  update(id: string, patch: Partial<Pick<UserRecord, 'displayName' | 'phone' | 'phoneVerified' | 'passwordHash'>>): Promise<void>;
  /**
   * Marks the account's email verified at `at`, only if it is still `email` (the address the link
   * went to): a link to an old address never verifies a new one. False otherwise.
   */
  markEmailVerified(id: string, email: string, at: number): Promise<boolean>;
  /** Sets a new email, unverified; false (and nothing written) when another account has it. */
  changeEmail(id: string, email: string): Promise<boolean>;
  /**
   * Takes `email` from the account that holds it, only while that account has not verified it: its
   * address becomes `placeholder` (unverified). Answers that account's id, or undefined when nobody
   * holds the address or its holder verified it. One conditional UPDATE: of racing callers one wins.
   */
  releaseUnverified(email: string, placeholder: string): Promise<string | undefined>;
  /**
   * Account deletion: the profile is blanked in place (the row stays, so ids in anonymised records
   * point nowhere personal): email becomes `placeholder` (unverified), display name empty, password
   * hash empty (no password matches it), phone gone. False when no such account.
   */
  erase(id: string, placeholder: string): Promise<boolean>;
}

/**
 * How a session was made. `recovery`: by account recovery (SMS code and recovery code, decisions §14);
 * such a session may add a passkey (the account has none left) but approves nothing without one.
 * `oauth`: signed in with a linked identity provider (decisions §15); never a passkey session.
 */
export type SessionMethod = 'password' | 'passkey' | 'recovery' | 'oauth';

export interface SessionRecord {
  tokenHash: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  /** How the owner signed in: adding or removing passkeys may need a passkey session. */
  method: SessionMethod;
}

export interface SessionsRepo {
  create(session: SessionRecord): Promise<void>;
  /** A live session (not expired at `now`). */
  live(tokenHash: string, now: number): Promise<SessionRecord | undefined>;
  delete(tokenHash: string): Promise<void>;
  deleteForUser(userId: string): Promise<void>;
  purgeExpired(now: number): Promise<number>;
}
