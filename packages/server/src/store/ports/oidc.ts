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
   * Every owner's clients with a redirect URI on `host` (lower-case host[:port], as `new URL().host`
   * gives it: no default port), oldest first, at most `limit`. For the readiness check (decisions §22).
   */
  listForHost(host: string, limit: number): Promise<OidcClientRecord[]>;
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
 * A public client that registered itself (RFC 7591, decisions §28): an MCP client with no owner.
 * It has no secret (PKCE is its proof) and nothing to verify; only the authorization endpoint and
 * the token endpoint read it.
 */
export interface OidcRegisteredClientRecord {
  /** `rc_` + 128 random bits: the `client_id`. */
  id: string;
  name: string;
  /** Exactly as registered (compared as strings at the authorization endpoint), in order. */
  redirectUris: string[];
  /** Shown to the owner, never fetched by the service. */
  clientUri: string | null;
  logoUri: string | null;
  createdAt: number;
}

export interface OidcRegisteredClientsRepo {
  create(client: OidcRegisteredClientRecord): Promise<void>;
  byId(id: string): Promise<OidcRegisteredClientRecord | undefined>;
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
  /** RFC 7638 thumbprint of the DPoP key its tokens are bound to; null for Bearer sign-ins. */
  dpopJkt: string | null;
  /**
   * The resource URL a person's browser approved (decisions §28): its passes' `aud`. Null for
   * agents' sign-ins and plain openid sign-ins.
   */
  resource: string | null;
}

/** At most `max` refreshes of one sign-in in a window of `windowMs` that starts at its first refresh. */
export interface RefreshLimit {
  max: number;
  windowMs: number;
}

/** One OidcSignInsRepo.rotate call, as a batch of them takes it (SignInRotationBatch). */
export interface SignInRotation {
  sid: string;
  currentHash: string;
  nextHash: string;
  now: number;
  limit: RefreshLimit;
}

/**
 * Rotations of distinct sign-ins committed together (one transaction, one flush), answered in
 * order: each as OidcSignInsRepo.rotate would answer it alone. A dialect's own statements
 * (sqlite/sign-in-rotations.ts, postgres/sign-in-rotations.ts); stepped-batching.ts makes the batches.
 */
export type SignInRotationBatch = (items: readonly SignInRotation[]) => Promise<(OidcSignInRecord | undefined)[]>;

/** What an access request filed by the OIDC provider shows the owner (decisions §18). */
export interface OidcRequestContext {
  clientId: string;
  clientName: string;
  /** Whether the site proved it runs the redirect URI's origin (`/verify`); "unverified site" otherwise. */
  verified: boolean;
  flow: 'authorize' | 'ciba';
  /** CIBA's `binding_message`, shown to the owner as written; null otherwise. */
  bindingMessage: string | null;
}

/**
 * Which live sign-ins to end: those of one grant's agent at its site, or every one of an agent. With
 * `resource` (a grant's, decisions §28), only the sign-ins for exactly that resource (null: those for
 * none), so revoking an app's grant for one resource leaves its sign-in for another on the same host.
 */
export type SignInScope = { agentId: string; site: string; resource?: string | null } | { agentId: string };

export interface OidcSignInsRepo {
  /** Inserts; false when the sid exists already (a code redeemed twice by racing callers). */
  create(signIn: OidcSignInRecord): Promise<boolean>;
  bySid(sid: string): Promise<OidcSignInRecord | undefined>;
  /**
   * Rotation as one compare-and-set: replaces the refresh hash only while it is still `currentHash`,
   * the sign-in has neither ended nor expired, and it is under its refresh limit (counted in the same
   * statement). Of N concurrent callers with the same token exactly one gets the updated record;
   * the others get undefined.
   */
  rotate(sid: string, currentHash: string, nextHash: string, now: number, limit: RefreshLimit): Promise<OidcSignInRecord | undefined>;
  /** When the refresh window of a sign-in that reached its limit ends (epoch ms); undefined when it has not reached it. */
  refreshLimitedUntil(sid: string, now: number, limit: RefreshLimit): Promise<number | undefined>;
  /** Ends the sign-in (all its refresh tokens die) and answers it; undefined when it was unknown or had ended. */
  end(sid: string, now: number): Promise<OidcSignInRecord | undefined>;
  /**
   * Ends, in one statement, every live (not ended, not expired) sign-in of an agent (at one site, or
   * anywhere), and answers those it ended: a sign-in is answered by one caller only.
   */
  endLive(of: SignInScope, now: number): Promise<OidcSignInRecord[]>;
  /** The owner's live (not ended, not expired) sign-ins, newest first. */
  listLiveForUser(userId: string, now: number): Promise<OidcSignInRecord[]>;
  /** Deletes sign-ins that ended or expired before `before`; answers how many. */
  purgeEnded(before: number): Promise<number>;
}

/**
 * The pairwise `act.sub` each client was given for an agent: how CIBA's `login_hint` finds the agent.
 * Bound to the client that received it (issue 22): another client on the same host, which computes
 * to the same pairwise value, does not find it.
 */
export interface OidcSubjectsRepo {
  /** Records that `clientId` was given `pairwise` for the agent at `site`; a pair recorded before is left as it is. */
  remember(clientId: string, site: string, pairwise: string, agentId: string, now: number): Promise<void>;
  /** The agent `clientId` knows by `pairwise` (the oldest record if several sites hold it); undefined when none. */
  find(clientId: string, pairwise: string): Promise<{ site: string; agentId: string } | undefined>;
  /** Forgets the agent's subjects at one site (its grant there revoked) or everywhere (the agent stopped); answers how many. */
  forget(of: SignInScope): Promise<number>;
}

/** A CIBA request in poll mode (decisions §18). */
export interface OidcCibaRecord {
  /** SHA-256 (hex) of the `auth_req_id` the client holds; the id itself is never stored. */
  idHash: string;
  clientId: string;
  /** The access request the owner answers. */
  txnId: string;
  agentId: string;
  userId: string;
  site: string;
  scopes: string[];
  /** The poll interval the client must keep, in seconds: 5, plus 5 at each `slow_down`. */
  intervalSec: number;
  lastPollAt: number | null;
  consumedAt: number | null;
  createdAt: number;
  expiresAt: number;
}

export type CibaPoll = { ok: true; record: OidcCibaRecord } | { ok: false; slowDown: true; intervalSec: number } | { ok: false; slowDown: false };

export interface OidcCibaRepo {
  create(record: OidcCibaRecord): Promise<void>;
  byIdHash(idHash: string): Promise<OidcCibaRecord | undefined>;
  /**
   * One poll, as a compare-and-set on `last_poll_at`: the first poll, or one at least `interval_sec`
   * after the previous, is recorded and answered `ok`; an earlier one adds 5 s to the interval, is
   * recorded as the latest poll, and answers `slowDown` with the new interval. Unknown: `{ok: false,
   * slowDown: false}`. Of concurrent polls at most one is `ok`.
   */
  poll(idHash: string, now: number): Promise<CibaPoll>;
  /** Marks it consumed; true for exactly one caller. */
  consume(idHash: string, now: number): Promise<boolean>;
  /** Deletes requests that expired before `before`; answers how many. */
  purgeExpired(before: number): Promise<number>;
}
