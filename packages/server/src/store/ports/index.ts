/**
 * Repository interfaces (ports), one file per concept. Domain code depends on these only;
 * `kysely-store.ts` implements them once for both dialects, and `test/store/` holds the contract
 * suites every backend must pass. Times are epoch milliseconds.
 */
export type * from './store.ts';
export type * from './accounts.ts';
export type * from './passkeys.ts';
export type * from './agents.ts';
export type * from './grants.ts';
export type * from './requests.ts';
export type * from './approval-modes.ts';
export type * from './signing-keys.ts';
export type * from './single-use.ts';
export type * from './counters.ts';
export type * from './reputation.ts';
export type * from './activity.ts';
export type * from './leases.ts';
export type * from './delivery.ts';
export type * from './oidc.ts';
export type * from './quotas.ts';
export type * from './email.ts';
export type * from './claims.ts';
export type * from './phone.ts';
export type * from './plans.ts';
export type * from './passes.ts';
export type * from './identity-providers.ts';
export type * from './takeovers.ts';
export type * from './operators.ts';
export type * from './connections.ts';
export type * from './readiness.ts';
export type * from './wba-keys.ts';
export type * from './receipts.ts';
