/**
 * Ports for the OIDC provider (decisions §18): the clients (sites) owners register. Times are epoch
 * milliseconds.
 */

export interface OidcClientRecord {
  /** `c_` + 128 random bits: the `client_id`. */
  id: string;
  /** The owner who registered it; only they see or change it. */
  userId: string;
  name: string;
  /** Exactly as registered (compared as strings at the authorization endpoint), in order. */
  redirectUris: string[];
  backchannelLogoutUri: string | null;
  /** A public client (a browser or native app) has no secret. */
  isPublic: boolean;
  /** SHA-256 (hex) of the client secret; null for a public client. */
  secretHash: string | null;
  /** When the current secret was made (at registration or the last rotation); null for a public client. */
  secretSetAt: number | null;
  /** What the site publishes in its well-known file: `mandate-client=<id>:<token>`. */
  verificationToken: string;
  /** Origins whose file held the line at the last successful check. */
  verifiedOrigins: string[];
  /** When the last successful check happened. */
  verifiedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** What an owner's change or a verification writes; absent fields stay as they are. */
export type OidcClientChanges = Partial<Pick<OidcClientRecord, 'name' | 'redirectUris' | 'backchannelLogoutUri' | 'verifiedOrigins' | 'verifiedAt' | 'updatedAt'>>;

export interface OidcClientsRepo {
  create(client: OidcClientRecord): Promise<void>;
  byId(id: string): Promise<OidcClientRecord | undefined>;
  /** The owner's clients, oldest first. */
  listForUser(userId: string): Promise<OidcClientRecord[]>;
  countForUser(userId: string): Promise<number>;
  /**
   * Applies `changes` to the owner's client in one statement, only while its redirect URIs are still
   * exactly `expectedRedirectUris` (compare-and-set): a verification that fetched the files of the
   * old URIs cannot mark new ones verified, and of two racing edits the one that read stale URIs
   * loses. Returns the updated record, or undefined (unknown, another owner's, or changed meanwhile).
   */
  update(userId: string, id: string, changes: OidcClientChanges, expectedRedirectUris: readonly string[]): Promise<OidcClientRecord | undefined>;
  /**
   * Replaces a confidential client's secret hash: the old secret stops working with this statement.
   * False for a public client, an unknown one or another owner's.
   */
  replaceSecret(userId: string, id: string, secretHash: string, at: number): Promise<boolean>;
  /** False when it is unknown or another owner's. */
  delete(userId: string, id: string): Promise<boolean>;
}

/**
 * One OIDC sign-in (`sid`) of an agent at a client (decisions §18): what its refresh tokens renew.
 * Only the SHA-256 of the current refresh token is kept; a sign-in lives at most 30 days.
 */
export interface OidcSignInRecord {
  sid: string;
  clientId: string;
  /** The owner of the agent (the person the ID token's `sub` names). */
  userId: string;
  agentId: string;
  /** The grant that covers it: revoked or superseded, the sign-in ends. */
  grantId: string;
  /** The redirect URI's host: the grant's site and the key of the pairwise identifiers. */
  site: string;
  scopes: string[];
  amr: string[];
  /** Epoch seconds. */
  authTime: number;
  /** SHA-256 (hex) of the live refresh token. */
  refreshHash: string;
  createdAt: number;
  expiresAt: number;
  /** When it ended (refresh token reuse, code replay, grant revoked); null while it lives. */
  endedAt: number | null;
}

export interface OidcSignInsRepo {
  /** Inserts; false when the sid exists already (a code redeemed twice by racing callers). */
  create(signIn: OidcSignInRecord): Promise<boolean>;
  bySid(sid: string): Promise<OidcSignInRecord | undefined>;
  /**
   * Rotation as one compare-and-set: replaces the refresh hash only while it is still `currentHash`
   * and the sign-in has neither ended nor expired. Of N concurrent callers with the same token
   * exactly one gets the updated record; the others get undefined.
   */
  rotate(sid: string, currentHash: string, nextHash: string, now: number): Promise<OidcSignInRecord | undefined>;
  /** Ends the sign-in (all its refresh tokens die); false when it was unknown or had ended. */
  end(sid: string, now: number): Promise<boolean>;
  /**
   * Ends, in one statement, every live (not ended, not expired) sign-in of a grant or of an agent,
   * and answers those it ended: a sign-in is answered by one caller only.
   */
  endLive(of: { grantId: string } | { agentId: string }, now: number): Promise<OidcSignInRecord[]>;
  /** Deletes sign-ins that ended or expired before `before`; answers how many. */
  purgeEnded(before: number): Promise<number>;
}
