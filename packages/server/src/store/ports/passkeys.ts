/** Passkeys (WebAuthn credentials) and the single-use challenges of their ceremonies. Times are epoch ms. */

export interface PasskeyRecord {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface PasskeysRepo {
  /** Returns false when the credential id is already registered (to anyone). */
  create(passkey: PasskeyRecord): Promise<boolean>;
  byCredentialId(credentialId: string): Promise<PasskeyRecord | undefined>;
  listForUser(userId: string): Promise<PasskeyRecord[]>;
  /**
   * Moves the sign counter forward. Compare-and-set on the old value, so two racing assertions with
   * the same counter cannot both pass; returns false when the stored counter was not `expected`.
   */
  advanceCounter(id: string, expected: number, next: number, usedAt: number): Promise<boolean>;
  delete(userId: string, id: string): Promise<boolean>;
  /** Removes every passkey of `userId` created at or after `since`; answers the ids removed. */
  deleteCreatedSince(userId: string, since: number): Promise<string[]>;
  /** Removes every passkey of `userId` (account deletion); answers how many. */
  deleteForUser(userId: string): Promise<number>;
}

export type ChallengePurpose = 'register' | 'login' | 'txn' | 'pairing';

export interface ChallengeRecord {
  challenge: string;
  purpose: ChallengePurpose;
  userId: string | null;
  sessionHash: string | null;
  /** What the challenge is about: the email of a login, the txn id of an approval. */
  subject: string | null;
  expiresAt: number;
  /**
   * The 128 random bits (base64url) the challenge of a step-up or agent approval commits to
   * (decisions §29, migration 030): kept so the approval's receipt can name them. Absent or null
   * for every other challenge.
   */
  nonce?: string | null;
}

export interface ChallengesRepo {
  create(challenge: ChallengeRecord): Promise<void>;
  /**
   * Atomically marks the challenge used and returns it, if it exists, has that purpose, is unused and
   * not expired at `now`. Of N concurrent callers with the same challenge exactly one gets the record.
   */
  consume(challenge: string, purpose: ChallengePurpose, now: number): Promise<ChallengeRecord | undefined>;
  purgeExpired(now: number): Promise<number>;
}
