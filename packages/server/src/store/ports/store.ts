import type { UsersRepo, SessionsRepo } from './accounts.ts';
import type { PasskeysRepo, ChallengesRepo } from './passkeys.ts';
import type { AgentsRepo, AgentWithGrant } from './agents.ts';
import type { SigningKeysRepo } from './signing-keys.ts';
import type { SingleUseRepo, SingleUseItem } from './single-use.ts';
import type { RateCountersRepo, CountersRepo, RevocationSignal } from './counters.ts';
import type { AuthzRequestsRepo } from './requests.ts';
import type { ApprovalModesRepo } from './approval-modes.ts';
import type { GrantsRepo } from './grants.ts';
import type { ReportsRepo, AgentStatusesRepo } from './reputation.ts';
import type { ActivityRepo } from './activity.ts';
import type { LeasesRepo } from './leases.ts';
import type { NotificationsRepo, NotifySettingsRepo, OutboxRepo, PushDevicesRepo, ServiceSecretsRepo } from './delivery.ts';
import type { OidcCibaRepo, OidcClientsRepo, OidcRegisteredClientsRepo, OidcSignInsRepo, OidcSubjectsRepo } from './oidc.ts';
import type { QuotasRepo } from './quotas.ts';
import type { EmailTokensRepo } from './email.ts';
import type { EmailClaimsRepo } from './claims.ts';
import type { PhoneCodesRepo, RecoveryCodesRepo } from './phone.ts';
import type { PlansRepo } from './plans.ts';
import type { OAuthIdentitiesRepo, OAuthStatesRepo } from './identity-providers.ts';
import type { TakeoversRepo } from './takeovers.ts';
import type { OperatorsRepo } from './operators.ts';
import type { ConnectionsRepo } from './connections.ts';
import type { WbaKeysRepo } from './wba-keys.ts';
import type { PassIssuance, PassIssuanceOutcome } from './passes.ts';
import type { ReadinessRepo } from './readiness.ts';
import type { ReceiptsRepo } from './receipts.ts';

/**
 * The store as a whole: every repository, plus the few operations that span several (cloud verify,
 * pass issuance, transactions). `kysely-store.ts` implements it once for both dialects.
 */
export type Dialect = 'sqlite' | 'postgres';

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
  approvalModes: ApprovalModesRepo;
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
  oidcRegisteredClients: OidcRegisteredClientsRepo;
  oidcSignIns: OidcSignInsRepo;
  oidcSubjects: OidcSubjectsRepo;
  oidcCiba: OidcCibaRepo;
  quotas: QuotasRepo;
  emailTokens: EmailTokensRepo;
  emailClaims: EmailClaimsRepo;
  phoneCodes: PhoneCodesRepo;
  plans: PlansRepo;
  recoveryCodes: RecoveryCodesRepo;
  oauthIdentities: OAuthIdentitiesRepo;
  oauthStates: OAuthStatesRepo;
  takeovers: TakeoversRepo;
  operators: OperatorsRepo;
  connections: ConnectionsRepo;
  readiness: ReadinessRepo;
  wbaKeys: WbaKeysRepo;
  receipts: ReceiptsRepo;
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
  /** Each advance of `rev_seq`, after its commit, on any node sharing the database (the revocation event stream). */
  readonly revocationSignal: RevocationSignal;
  /** Runs `work` in one database transaction. Do not nest. */
  transaction<T>(work: (repos: Repos) => Promise<T>): Promise<T>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL: the connection pool's counts, for the metrics; absent on SQLite (no pool). */
  poolStats?(): { total: number; idle: number; waiting: number };
}
