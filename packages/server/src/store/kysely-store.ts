import { type Kysely, sql } from 'kysely';
import type { AgentsRepo, Dialect, Repos, Store } from './ports/index.ts';
import type { Database } from './schema.ts';
import { type Db, SQLITE_PURGE_CHUNK } from './repos/db.ts';
import { usersRepo } from './repos/users.ts';
import { sessionsRepo } from './repos/sessions.ts';
import { passkeysRepo } from './repos/passkeys.ts';
import { challengesRepo } from './repos/challenges.ts';
import { agentsRepo } from './repos/agents.ts';
import { signingKeysRepo } from './repos/signing-keys.ts';
import { singleUseRepo } from './repos/single-use.ts';
import { batchingSingleUse } from './single-use-batching.ts';
import { batched } from '../batching.ts';
import { rateCountersRepo } from './repos/rate-counters.ts';
import { countersRepo } from './repos/counters.ts';
import { outboxRepo } from './repos/outbox.ts';
import { authzRequestsRepo } from './repos/authz-requests.ts';
import { approvalModesRepo } from './repos/approval-modes.ts';
import { grantsRepo } from './repos/grants.ts';
import { reportsRepo } from './repos/reports.ts';
import { agentStatusesRepo } from './repos/agent-statuses.ts';
import { activityRepo } from './repos/activity.ts';
import { leasesRepo } from './repos/leases.ts';
import { pushDevicesRepo } from './repos/push-devices.ts';
import { notificationsRepo } from './repos/notifications.ts';
import { notifySettingsRepo } from './repos/notify-settings.ts';
import { serviceSecretsRepo } from './repos/service-secrets.ts';
import { oidcClientsRepo } from './repos/oidc-clients.ts';
import { oidcRegisteredClientsRepo } from './repos/oidc-registered-clients.ts';
import { oidcSignInsRepo } from './repos/oidc-sign-ins.ts';
import { oidcSubjectsRepo } from './repos/oidc-subjects.ts';
import { oidcCibaRepo } from './repos/oidc-ciba.ts';
import { quotasRepo } from './repos/quotas.ts';
import { emailTokensRepo } from './repos/email-tokens.ts';
import { emailClaimsRepo } from './repos/email-claims.ts';
import { takeoversRepo } from './repos/takeovers.ts';
import { operatorsRepo } from './repos/operators.ts';
import { readinessRepo } from './repos/readiness.ts';
import { connectionsRepo } from './repos/connections.ts';
import { wbaKeysRepo } from './repos/wba-keys.ts';
import { receiptsRepo } from './repos/receipts.ts';
import { phoneCodesRepo, recoveryCodesRepo } from './repos/phone-codes.ts';
import { plansRepo } from './repos/plans.ts';
import { oauthIdentitiesRepo } from './repos/oauth-identities.ts';
import { oauthStatesRepo } from './repos/oauth-states.ts';
import type { HotPath } from './hot-path.ts';
import type { GrantsRepo, OidcClientsRepo, OidcSignInRecord, OidcSignInsRepo, PassIssuanceBatch, SignInRotation, SignInRotationBatch, UsersRepo } from './ports/index.ts';
import { batchedInSteps } from './stepped-batching.ts';
import { kyselyPassIssuance } from './repos/pass-issuance.ts';
import { batchingPassIssuance } from './pass-issuance-batching.ts';
import { RevocationSignalHub, signallingCounters } from './revocation-signal.ts';

function repos(db: Db, dialect: Dialect): Repos {
  const purgeChunk = dialect === 'sqlite' ? SQLITE_PURGE_CHUNK : undefined;
  return {
    users: usersRepo(db),
    sessions: sessionsRepo(db),
    passkeys: passkeysRepo(db),
    challenges: challengesRepo(db),
    agents: agentsRepo(db),
    signingKeys: signingKeysRepo(db),
    singleUse: singleUseRepo(db, purgeChunk),
    rateCounters: rateCountersRepo(db, purgeChunk),
    counters: countersRepo(db),
    outbox: outboxRepo(db, dialect),
    authzRequests: authzRequestsRepo(db, purgeChunk),
    approvalModes: approvalModesRepo(db),
    grants: grantsRepo(db),
    reports: reportsRepo(db),
    agentStatuses: agentStatusesRepo(db),
    activity: activityRepo(db, dialect),
    leases: leasesRepo(db),
    pushDevices: pushDevicesRepo(db),
    notifications: notificationsRepo(db, purgeChunk),
    notifySettings: notifySettingsRepo(db),
    serviceSecrets: serviceSecretsRepo(db),
    oidcClients: oidcClientsRepo(db),
    oidcRegisteredClients: oidcRegisteredClientsRepo(db),
    oidcSignIns: oidcSignInsRepo(db),
    oidcSubjects: oidcSubjectsRepo(db),
    oidcCiba: oidcCibaRepo(db),
    quotas: quotasRepo(db, dialect),
    emailTokens: emailTokensRepo(db),
    emailClaims: emailClaimsRepo(db),
    phoneCodes: phoneCodesRepo(db),
    plans: plansRepo(db),
    recoveryCodes: recoveryCodesRepo(db),
    oauthIdentities: oauthIdentitiesRepo(db),
    oauthStates: oauthStatesRepo(db),
    takeovers: takeoversRepo(db),
    operators: operatorsRepo(db),
    connections: connectionsRepo(db),
    readiness: readinessRepo(db),
    wbaKeys: wbaKeysRepo(db),
    receipts: receiptsRepo(db),
  };
}

/**
 * The one Store implementation: Kysely compiles the same queries for SQLite and PostgreSQL, and
 * every statement used here (ON CONFLICT, RETURNING) means the same on both. `hot`, when given,
 * runs cloud verify's statements outside transactions (hot-path.ts).
 */
export function kyselyStore(db: Kysely<Database>, dialect: Dialect, hot?: HotPath, passes?: TokenPaths, signal = new RevocationSignalHub()): Store {
  const singleUse = singleUseRepo(db, dialect === 'sqlite' ? SQLITE_PURGE_CHUNK : undefined);
  const agents = agentsRepo(db);
  const hotAgents: AgentsRepo = hot ? { ...agents, withGrants: hot.withGrants, withGrant: async (agentId, grantId) => (await hot.withGrants([{ agentId, grantId }]))[0] } : agents;
  // Outside transactions, single-use keys are written in group commits (single-use-batching.ts);
  // on PostgreSQL a few statements may run at once, leaving the rest of the pool to other queries.
  const batchedSingleUse = batchingSingleUse(hot ? { ...singleUse, consumeMany: hot.consumeMany } : singleUse, { maxInFlight: dialect === 'postgres' ? 4 : 1 });
  // Cloud verify's revocation read, batched the same way on PostgreSQL, where concurrent verifies
  // then share one round trip (measured: 1.7 x the throughput). On SQLite a read is a call into the
  // same process, cheaper than the batching around it.
  const readAgents = dialect === 'postgres' ? withBatchedGrantReads(hotAgents) : hotAgents;
  // Where the dialect does the read and the jti in one step (PostgreSQL: one statement; SQLite: one
  // transaction on the hot path's worker thread), concurrent verifications share it; elsewhere (an
  // in-memory SQLite database) the read, then the (group-committed) jti. One step in flight per
  // node: the verifications arriving meanwhile make the next batch larger, fewer statements in all
  // (measured on PostgreSQL, three alternating runs each: 0.67-0.70 x baseline with 1, 0.60-0.64
  // with 2, 0.58-0.60 with 4, and a third less database CPU per verification than with 4).
  const verifyLookup: Store['verifyLookup'] = hot?.verifyLookups
    ? batched(hot.verifyLookups, { maxInFlight: 1 })
    : async (q) => {
        const standing = await readAgents.withGrant(q.agentId, q.grantId);
        const fresh = await batchedSingleUse.consume(q.jti.namespace, q.jti.key, q.jti.expiresAt, q.now);
        return { standing, fresh };
      };
  // Pass issuances in group commits (pass-issuance-batching.ts): the dialect's own statements when
  // given (sqlite/pass-issuance.ts, postgres/pass-issuance.ts), else the repositories in a transaction.
  const commitPassIssuance = batchingPassIssuance(passes?.batch ?? kyselyPassIssuance(db, dialect));
  const base = repos(db, dialect);
  // The reads of every token call (the agent, for its JWT check, and its grant at the site; for an
  // OIDC refresh the client, the sign-in and the owner), where the dialect has faster ones
  // (sqlite/token-reads.ts, postgres/token-reads.ts).
  const grants: GrantsRepo = passes?.activeFor ? { ...base.grants, activeFor: passes.activeFor } : base.grants;
  const agentsRead: AgentsRepo = passes?.agentById ? { ...readAgents, byId: passes.agentById } : readAgents;
  const users: UsersRepo = passes?.userById ? { ...base.users, byId: passes.userById } : base.users;
  const oidcClients: OidcClientsRepo = passes?.clientById ? { ...base.oidcClients, byId: passes.clientById } : base.oidcClients;
  // OIDC refresh token rotations in group commits as pass issuances (stepped-batching.ts): the
  // dialect's own statements when given, else each one through the repository.
  const rotate = batchedInSteps<SignInRotation, OidcSignInRecord | undefined>(
    passes?.rotations ?? ((step) => Promise.all(step.map((q) => base.oidcSignIns.rotate(q.sid, q.currentHash, q.nextHash, q.now, q.limit)))),
    (q) => [q.sid],
    'sign-in rotation',
  );
  const oidcSignIns: OidcSignInsRepo = {
    ...base.oidcSignIns,
    ...(passes?.signInBySid ? { bySid: passes.signInBySid } : {}),
    rotate: (sid, currentHash, nextHash, now, limit) => rotate({ sid, currentHash, nextHash, now, limit }),
  };
  return {
    ...base,
    users,
    oidcClients,
    oidcSignIns,
    // Outside a transaction a statement commits by itself: its rev_seq is told at once.
    counters: signallingCounters(base.counters, db, dialect, (v) => signal.emit(v)),
    revocationSignal: signal,
    grants,
    singleUse: batchedSingleUse,
    agents: agentsRead,
    verifyLookup,
    commitPassIssuance,
    dialect,
    // A rev_seq advanced in a transaction is told after its commit only (decisions §30).
    async transaction(work) {
      let advanced: number | undefined;
      const result = await db.transaction().execute((trx) => {
        const r = repos(trx, dialect);
        return work({ ...r, counters: signallingCounters(r.counters, trx, dialect, (v) => { advanced = v; }) });
      });
      if (advanced !== undefined) signal.emit(advanced);
      return result;
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await hot?.close();
      await passes?.close?.();
      await db.destroy();
    },
  };
}

/**
 * A dialect's own statements for the token endpoints: the pass issuance and refresh token rotation
 * batch commits and, outside transactions, the reads every token call makes. They must mean what
 * the repositories mean: the store contract suites (test/store/) run against both.
 */
export interface TokenPaths {
  batch: PassIssuanceBatch;
  rotations?: SignInRotationBatch;
  activeFor?: GrantsRepo['activeFor'];
  agentById?: AgentsRepo['byId'];
  signInBySid?: OidcSignInsRepo['bySid'];
  userById?: UsersRepo['byId'];
  clientById?: OidcClientsRepo['byId'];
  close?(): Promise<void>;
}

function withBatchedGrantReads(repo: AgentsRepo): AgentsRepo {
  const read = batched<{ agentId: string; grantId: string }, Awaited<ReturnType<AgentsRepo['withGrant']>>>((pairs) => repo.withGrants(pairs), { maxInFlight: 4 });
  return { ...repo, withGrant: (agentId, grantId) => read({ agentId, grantId }) };
}
