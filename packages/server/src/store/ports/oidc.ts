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
