/**
 * Repository interfaces (ports). Domain code depends on these only; `kysely-store.ts` implements them
 * once for both dialects, and `test/store/contract.ts` holds the one suite every backend must pass.
 * Times are epoch milliseconds.
 */
export type Dialect = 'sqlite' | 'postgres';

import type { NotificationsRepo, NotifySettingsRepo, OutboxRepo, PushDevicesRepo, ServiceSecretsRepo } from './ports/delivery.ts';
export type * from './ports/delivery.ts';
import type { OidcCibaRepo, OidcClientsRepo, OidcRequestContext, OidcSignInsRepo, OidcSubjectsRepo } from './ports/oidc.ts';
export type * from './ports/oidc.ts';
import type { QuotasRepo } from './ports/quotas.ts';
export type * from './ports/quotas.ts';
import type { EmailTokensRepo } from './ports/email.ts';
export type * from './ports/email.ts';
import type { EmailClaimsRepo } from './ports/claims.ts';
export type * from './ports/claims.ts';
import type { PassIssuance, PassIssuanceOutcome } from './ports/passes.ts';
export type * from './ports/passes.ts';

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
}

export type SessionMethod = 'password' | 'passkey';

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

export type AgentStatus = 'active' | 'removed';
export type AgentFlag = 'ok' | 'suspicious' | 'revoked';

export interface AgentRecord {
  id: string;
  userId: string;
  name: string;
  publicJwk: { kty: 'EC'; crv: 'P-256'; x: string; y: string };
  jkt: string;
  status: AgentStatus;
  flag: AgentFlag;
  /** The revocation sequence at which the current non-ok flag or removal took effect. */
  flagRevSeq: number | null;
  createdAt: number;
  removedAt: number | null;
  /** When a `revoked` flag was last lifted (to ok or suspicious), and the rev_seq of that block. */
  unblockedAt: number | null;
  unblockedRevSeq: number | null;
}

/**
 * An agent as the revocation list reads it (AgentsRepo.listRevoked), with its owner and when its
 * current non-ok flag was set (null while `ok`, or when unknown): the list's bound across accounts
 * (domain/revocation/revocation-bound.ts) drops blocks older than the window, fairly per owner.
 */
export type RevokedAgentRow = Pick<AgentRecord, 'id' | 'userId' | 'status' | 'flag' | 'flagRevSeq' | 'removedAt' | 'unblockedAt' | 'unblockedRevSeq'> & { flaggedAt: number | null };

/** What AgentsRepo.update writes: `flaggedAt` is only read by the revocation list, so AgentRecord does not carry it. */
export type AgentPatch = Partial<Pick<AgentRecord, 'status' | 'flag' | 'flagRevSeq' | 'removedAt' | 'name' | 'unblockedAt' | 'unblockedRevSeq'> & { flaggedAt: number | null }>;

/** Why an agent is on the revocation list; each reason is read from an index of its own. */
export type RevokedAgentReason = 'flagged' | 'removed' | 'unblocked';

/** One page of AgentsRepo.listRevoked: at most `limit` rows of `reason` after the row `after`. */
export interface RevokedAgentPage {
  reason: RevokedAgentReason;
  after?: RevokedAgentRow;
  limit: number;
}

export interface AgentsRepo {
  create(agent: AgentRecord): Promise<void>;
  byId(id: string): Promise<AgentRecord | undefined>;
  listForUser(userId: string, includeRemoved?: boolean): Promise<AgentRecord[]>;
  update(id: string, patch: AgentPatch): Promise<void>;
  /**
   * The agent part of the revocation list at `now` (decisions §25), for three reasons: live agents
   * with a non-ok flag (`flagged`, by id), and agents removed (`removed`, by removedAt, id) or
   * unblocked (`unblocked`, by unblockedAt, id) less than LISTED_FOR_MS (600 s + 120 s,
   * domain/revocation/revocation-window.ts) before `now`. With `page`, at most `page.limit` rows of
   * `page.reason` after the row `page.after` (keyset paging: a long list is read in steps); without,
   * all three, each agent once.
   */
  listRevoked(now: number, page?: RevokedAgentPage): Promise<RevokedAgentRow[]>;
  /**
   * The agent and, when it belongs to that agent, the grant `grantId`, read together in one query
   * (cloud verify's revocation read, once per request). `grant` is undefined when there is no such
   * grant or it is another agent's.
   */
  withGrant(agentId: string, grantId: string): Promise<AgentWithGrant | undefined>;
  /** `withGrant` for many pairs in ONE query; answers in the order asked. */
  withGrants(pairs: readonly { agentId: string; grantId: string }[]): Promise<(AgentWithGrant | undefined)[]>;
}

export type AgentWithGrant = { agent: AgentStanding; grant: GrantStanding | undefined };

/** What cloud verify needs to know about a pass's agent (no key: the pass is already verified). */
export type AgentStanding = Pick<AgentRecord, 'id' | 'name' | 'status' | 'flag'>;

/** What cloud verify needs to know about a pass's grant. */
export type GrantStanding = Pick<GrantRecord, 'id' | 'agentId' | 'site' | 'status'>;

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

export interface SingleUseRepo {
  /**
   * Records `key` in `namespace` until `expiresAt`. Returns true for the first caller only: of N
   * concurrent callers on any number of nodes sharing the database, exactly one gets true
   * (INSERT ... ON CONFLICT DO NOTHING on the primary key). An expired entry may be reused.
   */
  consume(namespace: string, key: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * `consume` for many keys in ONE statement (one commit): answers, in order, whether each item was
   * first. The same guarantee per key as `consume`; a key listed twice is first at most once.
   */
  consumeMany(items: readonly SingleUseItem[], now: number): Promise<boolean[]>;
  purgeExpired(now: number): Promise<number>;
}

export interface SingleUseItem {
  namespace: string;
  key: string;
  expiresAt: number;
}

export interface RateCountersRepo {
  /** Atomically adds one to the counter of `key` in the fixed window holding `now`; returns the new count. */
  hit(key: string, windowMs: number, now: number): Promise<{ count: number; resetAt: number }>;
  /** Atomically takes back one `hit` made at `at` (same window), never below zero: an attempt that turned out not to count. */
  release(key: string, windowMs: number, at: number): Promise<void>;
  /** Forgets every window of `key`. */
  clear(key: string): Promise<void>;
  purgeExpired(now: number): Promise<number>;
}

export interface CountersRepo {
  /** Atomically increments and returns the new value (starts at 1). */
  next(name: string): Promise<number>;
  current(name: string): Promise<number>;
}

export type RequestKind = 'initial' | 'stepup';
export type RequestStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'consumed';

/** An access request (`initial`) or a step-up request (`stepup`): the `txn_id` of the interface. */
export interface AuthzRequestRecord {
  id: string;
  kind: RequestKind;
  agentId: string;
  userId: string;
  site: string;
  scopes: string[];
  userInfo: string[];
  action: string | null;
  status: RequestStatus;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  grantId: string | null;
  /** Set when the OIDC provider filed the request for a sign-in: what the owner's card shows. */
  oidc: OidcRequestContext | null;
}

export interface AuthzRequestsRepo {
  /** Inserts; returns false when an access request for that agent and site is already pending. */
  create(request: AuthzRequestRecord): Promise<boolean>;
  byId(id: string): Promise<AuthzRequestRecord | undefined>;
  /** Marks pending requests past their expiry as `expired` (all, or those of one agent and site); answers those it marked. */
  expireStale(now: number, scope?: { agentId: string; site: string }): Promise<AuthzRequestRecord[]>;
  /** Open (pending, unexpired) requests for the owner's agents, newest first; at most `limit` when given. */
  listPendingForUser(userId: string, now: number, limit?: number): Promise<AuthzRequestRecord[]>;
  /**
   * Compare-and-set of the status: moves the request to `to` only if its status is one of `from`
   * (and, when `from` includes `pending`, only if it has not expired). Of concurrent callers exactly
   * one gets the updated record; the others get undefined.
   */
  transition(id: string, from: RequestStatus[], to: RequestStatus, now: number, patch?: { grantId?: string }): Promise<AuthzRequestRecord | undefined>;
  /** Ends every pending request of an agent (it was removed or revoked); returns how many. */
  cancelPendingForAgent(agentId: string, now: number): Promise<number>;
  /**
   * Deletes requests that are no longer pending (answered, expired, consumed) and expired before
   * `before`; a pending row is never deleted, even past its expiry (it is first marked expired, with
   * its activity record). Answers how many went.
   */
  purgeEnded(before: number): Promise<number>;
}

export type GrantStatus = 'active' | 'revoked' | 'superseded';

export interface GrantRecord {
  id: string;
  userId: string;
  agentId: string;
  site: string;
  scopes: string[];
  userInfo: string[];
  status: GrantStatus;
  createdAt: number;
  expiresAt: number | null;
  usesLeft: number | null;
  /** SHA-256 of the one current refresh token. */
  refreshHash: string | null;
  passesIssued: number;
  revokedAt: number | null;
  revSeq: number | null;
  /** When a newer approval superseded it; null while it is active or revoked. */
  supersededAt: number | null;
}

/** A revoked grant as the revocation list reads it (GrantsRepo.listRevoked). */
export type RevokedGrantRow = Pick<GrantRecord, 'id' | 'agentId' | 'site' | 'revSeq'> & { revokedAt: number };

/** One page of GrantsRepo.listRevoked: at most `limit` rows after the key `after` (revokedAt, id). */
export interface RevokedGrantPage {
  after?: { revokedAt: number; id: string };
  limit: number;
}

export interface GrantsRepo {
  create(grant: GrantRecord): Promise<void>;
  byId(id: string): Promise<GrantRecord | undefined>;
  /** The newest active grant of an agent at a site (it may have expired or run out of uses). */
  activeFor(agentId: string, site: string): Promise<GrantRecord | undefined>;
  listActiveForUser(userId: string): Promise<GrantRecord[]>;
  listForAgent(agentId: string): Promise<GrantRecord[]>;
  /** Active -> revoked at `revSeq`; false when it was not active. */
  revoke(id: string, now: number, revSeq: number): Promise<boolean>;
  revokeAllForAgent(agentId: string, now: number, revSeq: number): Promise<number>;
  /** Active or revoked grants of an agent at a site -> superseded at `now` (a fresh approval replaces them). */
  supersede(agentId: string, site: string, now: number): Promise<number>;
  /**
   * Issues one pass in one atomic statement: the grant must be active, unexpired at `now`, with uses
   * left (one is used), and, when `expectedRefreshHash` is given, hold exactly that refresh token.
   * The refresh token is replaced by `newRefreshHash`. Of concurrent callers presenting the same
   * refresh token exactly one succeeds. Returns the updated grant, or undefined.
   */
  issuePass(id: string, args: { now: number; newRefreshHash: string; expectedRefreshHash?: string }): Promise<GrantRecord | undefined>;
  /**
   * Replaces the grant's user-info fields, only if they are still `expected` (compare-and-set, so
   * two narrowings at once cannot bring back a field the other removed). Returns false otherwise.
   */
  setUserInfo(id: string, userInfo: string[], expected: string[]): Promise<boolean>;
  /**
   * The grant part of the revocation list at `now` (decisions §25): grants revoked less than
   * LISTED_FOR_MS (600 s + 120 s, domain/revocation/revocation-window.ts) before `now`, also those
   * superseded since, ordered by (revokedAt, id). With `page`, at most `page.limit` of them, after
   * the key `page.after` (keyset paging: a long list is read in steps).
   */
  listRevoked(now: number, page?: RevokedGrantPage): Promise<RevokedGrantRow[]>;
}

export type ReportKind = 'good' | 'spam' | 'abuse' | 'fraud' | 'policy' | 'scraping';

export interface ReportRecord {
  agentId: string;
  site: string;
  kind: ReportKind;
  detail: string;
  createdAt: number;
}

export interface ReportsRepo {
  /**
   * A site's latest report replaces its previous one (each site counts once), unless the previous
   * one's kind is in `keep`; decided in one statement. Returns whether the report was stored.
   */
  upsert(report: ReportRecord, keep?: readonly ReportKind[]): Promise<boolean>;
  listForAgent(agentId: string): Promise<ReportRecord[]>;
}

export interface AgentStatusRecord {
  agentId: string;
  site: string;
  status: string;
  createdAt: number;
}

export interface AgentStatusesRepo {
  /**
   * Keeps the latest status per agent and site; then only the agent's `keep` newest sites stay
   * (an agent may name any number of sites: its statuses must not grow without bound).
   */
  upsert(status: AgentStatusRecord, keep?: number): Promise<void>;
  /** Newest first; at most `limit` when given. */
  listForAgent(agentId: string, limit?: number): Promise<AgentStatusRecord[]>;
}

export interface ActivityRecord {
  /**
   * The owner's own sequence number: 1, 2, 3... per owner, assigned in the same transaction as the
   * record, so a rolled-back or interrupted write leaves no gap and a missing number means a
   * missing record.
   */
  seq: number;
  userId: string;
  agentId: string | null;
  site: string | null;
  action: string;
  detail: Record<string, unknown>;
  ip: string | null;
  createdAt: number;
}

export interface ActivityQuery {
  /** Only records with a smaller sequence number; 0 = from the newest. */
  before: number;
  limit: number;
  agentId?: string;
  site?: string;
  action?: string;
}

export interface ActivityRepo {
  /** Appends with the owner's next sequence number (returned); atomic on its own or inside a transaction. */
  add(record: Omit<ActivityRecord, 'seq'>): Promise<number>;
  /** Newest first. */
  list(userId: string, query: ActivityQuery): Promise<ActivityRecord[]>;
}

export interface LeaseRecord {
  name: string;
  holder: string;
  expiresAt: number;
}

/**
 * Named leases in the shared store, so that background work runs on one node at a time. A lease is
 * an efficiency guard, not a safety one: the work it guards must stay harmless if two nodes ever
 * ran it at once (a node whose clock runs far ahead could take a lease early).
 */
export interface LeasesRepo {
  /**
   * Takes the lease `name` for `holder` until `now + ttlMs`, or renews it when `holder` already
   * holds it. One conditional upsert: it succeeds when the lease is free, expired at `now`, or held
   * by `holder`. Of N concurrent callers with different holders on any number of nodes, at most one
   * gets true.
   */
  acquire(name: string, holder: string, now: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it (a node shutting down), so another node can take it at once. */
  release(name: string, holder: string): Promise<boolean>;
  get(name: string): Promise<LeaseRecord | undefined>;
}

export interface Repos {
  users: UsersRepo;
  sessions: SessionsRepo;
  passkeys: PasskeysRepo;
  challenges: ChallengesRepo;
  agents: AgentsRepo;
  signingKeys: SigningKeysRepo;
  singleUse: SingleUseRepo;
  rateCounters: RateCountersRepo;
  counters: CountersRepo;
  outbox: OutboxRepo;
  authzRequests: AuthzRequestsRepo;
  grants: GrantsRepo;
  reports: ReportsRepo;
  agentStatuses: AgentStatusesRepo;
  activity: ActivityRepo;
  leases: LeasesRepo;
  pushDevices: PushDevicesRepo;
  notifications: NotificationsRepo;
  notifySettings: NotifySettingsRepo;
  serviceSecrets: ServiceSecretsRepo;
  oidcClients: OidcClientsRepo;
  oidcSignIns: OidcSignInsRepo;
  oidcSubjects: OidcSubjectsRepo;
  oidcCiba: OidcCibaRepo;
  quotas: QuotasRepo;
  emailTokens: EmailTokensRepo;
  emailClaims: EmailClaimsRepo;
}

/** One cloud verification's store work: the pass's agent with its grant, and the proof's jti. */
export interface VerifyLookup {
  agentId: string;
  grantId: string;
  jti: SingleUseItem;
  now: number;
}

export interface VerifyLookupResult {
  /** As AgentsRepo.withGrant, read from committed data. */
  standing: AgentWithGrant | undefined;
  /** As SingleUseRepo.consume: true for the first caller only, across all nodes. */
  fresh: boolean;
}

export interface Store extends Repos {
  readonly dialect: Dialect;
  /**
   * Cloud verify's read and write together, outside any transaction: on PostgreSQL one statement
   * (one round trip) for a whole batch of concurrent verifications. The jti is consumed whatever the
   * standing says; the caller judges the standing.
   */
  verifyLookup(q: VerifyLookup): Promise<VerifyLookupResult>;
  /**
   * One pass issuance's write (ports/passes.ts): rate counter, grant compare-and-set and the
   * `pass.issued` record in one commit, shared with the issuances running at the same time (group
   * commit). Answered once that commit is durable; a failed commit fails every caller in it. Of
   * concurrent calls with the same refresh token exactly one is issued, across all nodes.
   */
  commitPassIssuance(q: PassIssuance): Promise<PassIssuanceOutcome>;
  /** Runs `work` in one database transaction. Do not nest. */
  transaction<T>(work: (repos: Repos) => Promise<T>): Promise<T>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL: the connection pool's counts, for the metrics; absent on SQLite (no pool). */
  poolStats?(): { total: number; idle: number; waiting: number };
}
