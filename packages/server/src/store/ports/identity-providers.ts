/** Identity providers (decisions §15): linked identities and flows under way. Times are epoch ms. */

export interface OAuthIdentityRecord {
  /** The issuer identifier and the `sub` it gave: together, one identity. */
  issuer: string;
  subject: string;
  userId: string;
  /** The configured provider name it was linked through. */
  provider: string;
  createdAt: number;
}

export interface OAuthIdentitiesRepo {
  /**
   * Links an identity to an account. False (nothing written) when the identity is linked already (to
   * this account or another) or the account has an identity of this provider: one INSERT ... ON
   * CONFLICT DO NOTHING, so of racing callers at most one links a given identity.
   */
  link(identity: OAuthIdentityRecord): Promise<boolean>;
  byIdentity(issuer: string, subject: string): Promise<OAuthIdentityRecord | undefined>;
  listForUser(userId: string): Promise<OAuthIdentityRecord[]>;
  /** Removes the account's identity of `provider`; answers whether there was one. */
  unlink(userId: string, provider: string): Promise<boolean>;
  /** Seam for account deletion: removes every identity of the account. */
  deleteForUser(userId: string): Promise<number>;
}

/** Why a flow was started: what its callback may do. */
export type OAuthFlowPurpose = 'sign_in' | 'link' | 'approve';

export interface OAuthStateRecord {
  /** SHA-256 (hex) of the `state` sent to the issuer; the state itself is only in the redirect. */
  stateHash: string;
  purpose: OAuthFlowPurpose;
  provider: string;
  /** The owner who started it (link, approve); null for a sign-in. */
  userId: string | null;
  /** The request an approval is for; null otherwise. */
  txnId: string | null;
  /** An approval's limits (ApproveLimitsIn) as given; null otherwise. */
  limits: { expiresIn?: number; maxUses?: number } | null;
  /** SHA-256 of the cookie that binds a sign-in or link to its browser; null for an approval. */
  browserHash: string | null;
  nonce: string;
  codeVerifier: string;
  createdAt: number;
  expiresAt: number;
}

export interface OAuthStatesRepo {
  create(state: OAuthStateRecord): Promise<void>;
  /**
   * Marks the flow used and returns it, if unused and unexpired at `now`. One UPDATE ... WHERE
   * used_at IS NULL ... RETURNING: of N concurrent callers on any number of nodes exactly one gets it.
   */
  consume(stateHash: string, now: number): Promise<OAuthStateRecord | undefined>;
  /** Deletes flows that expired before `before` (used or not). */
  purgeExpired(before: number): Promise<number>;
  /** Seam for account deletion: removes the account's flows. */
  deleteForUser(userId: string): Promise<number>;
}
