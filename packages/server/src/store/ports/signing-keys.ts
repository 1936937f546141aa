/** The service's own signing keys (passes, revocation list, ID tokens). Times are epoch ms. */

export interface SigningKeyRecord {
  kid: string;
  publicJwk: Record<string, unknown>;
  /** JSON of the private JWK, or its ciphertext when `encrypted`. */
  privateJwk: string;
  encrypted: boolean;
  createdAt: number;
  retiredAt: number | null;
}

export interface SigningKeysRepo {
  create(key: SigningKeyRecord): Promise<void>;
  list(): Promise<SigningKeyRecord[]>;
  /** Retires every active key except `keepKid`, at `now`. */
  retireAllExcept(keepKid: string, now: number): Promise<void>;
  /**
   * Deletes every key but `keepKid` created at or before `createdAt` (retired or not, private part
   * and all): a "revoke now" rotation. A key another node created later is kept. Answers the kids deleted.
   */
  dropOlder(keepKid: string, createdAt: number): Promise<string[]>;
  replacePrivate(kid: string, privateJwk: string, encrypted: boolean): Promise<void>;
}
