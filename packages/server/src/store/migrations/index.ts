import { type Kysely, type Migration, Migrator } from 'kysely';
import type { Dialect } from '../ports/index.ts';
import * as foundation from './001-foundation.ts';
import * as protocol from './002-protocol.ts';
import * as sessionMethod from './003-session-method.ts';
import * as revocationWindow from './004-revocation-window.ts';
import * as leasesAndOwnerSeq from './005-leases-and-owner-seq.ts';
import * as revocationIndexes from './006-revocation-indexes.ts';
import * as devicesAndNotifications from './007-devices-and-notifications.ts';
import * as oidcClients from './008-oidc-clients.ts';
import * as oidcSignIns from './009-oidc-sign-ins.ts';
import * as oidcCibaDpop from './010-oidc-ciba-dpop.ts';
import * as emailVerification from './011-email-verification.ts';
import * as abuseQuotas from './012-abuse-quotas.ts';
import * as activityFilters from './013-activity-filters.ts';
import * as revocationCompaction from './014-revocation-compaction.ts';
import * as outboxFairness from './015-outbox-fairness.ts';
import * as cibaBinding from './016-ciba-binding.ts';
import * as addressTakeover from './017-address-takeover.ts';
import * as revocationBound from './018-revocation-bound.ts';
import * as phoneRecovery from './019-phone-recovery.ts';
import * as identityProviders from './020-identity-providers.ts';
import * as agentApprovals from './021-agent-approvals.ts';
import * as plans from './022-plans.ts';
import * as takeovers from './023-takeovers.ts';
import * as operators from './024-operators.ts';
import * as passwordManager from './025-password-manager.ts';
import * as operatorCodes from './026-operator-codes.ts';
import * as connectionLimits from './027-connection-limits.ts';
import * as wbaKeys from './028-wba-keys.ts';
import * as readiness from './029-readiness.ts';
import * as approvalReceipts from './030-approval-receipts.ts';
import * as registeredClients from './031-registered-clients.ts';
import * as siteStepups from './032-site-stepups.ts';
import * as appsAndResources from './033-apps-and-resources.ts';

type DialectMigration = { up(db: Kysely<unknown>, dialect: Dialect): Promise<void> };

/** Ordered by name; append, never edit a migration that has shipped. */
const MIGRATIONS: Record<string, DialectMigration> = {
  '001-foundation': foundation,
  '002-protocol': protocol,
  '003-session-method': sessionMethod,
  '004-revocation-window': revocationWindow,
  '005-leases-and-owner-seq': leasesAndOwnerSeq,
  '006-revocation-indexes': revocationIndexes,
  '007-devices-and-notifications': devicesAndNotifications,
  '008-oidc-clients': oidcClients,
  '009-oidc-sign-ins': oidcSignIns,
  '010-oidc-ciba-dpop': oidcCibaDpop,
  '011-email-verification': emailVerification,
  '012-abuse-quotas': abuseQuotas,
  '013-activity-filters': activityFilters,
  '014-revocation-compaction': revocationCompaction,
  '015-outbox-fairness': outboxFairness,
  '016-ciba-binding': cibaBinding,
  '017-address-takeover': addressTakeover,
  '018-revocation-bound': revocationBound,
  '019-phone-recovery': phoneRecovery,
  '020-identity-providers': identityProviders,
  '021-agent-approvals': agentApprovals,
  '022-plans': plans,
  '023-takeovers': takeovers,
  '024-operators': operators,
  '025-password-manager': passwordManager,
  '026-operator-codes': operatorCodes,
  '027-connection-limits': connectionLimits,
  '028-wba-keys': wbaKeys,
  '029-readiness': readiness,
  '030-approval-receipts': approvalReceipts,
  '031-registered-clients': registeredClients,
  '032-site-stepups': siteStepups,
  '033-apps-and-resources': appsAndResources,
};

/**
 * Applies pending migrations. Kysely's migrator takes a lock first (on PostgreSQL an advisory lock),
 * so two nodes starting together over one PostgreSQL database apply each migration once. `upTo` (a
 * migration name) stops there: tests use it to write data as an older release would, then migrate it.
 */
export async function migrate(db: Kysely<unknown>, dialect: Dialect, upTo?: string): Promise<void> {
  const migrations: Record<string, Migration> = {};
  for (const [name, m] of Object.entries(MIGRATIONS)) migrations[name] = { up: (d) => m.up(d, dialect) };
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = upTo === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(upTo);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
