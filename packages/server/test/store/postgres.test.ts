import { openPostgresStore } from '../../src/store/postgres/open.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { storeContract } from './contract.ts';
import { deliveryContract } from './contract-delivery.ts';
import { oidcContract } from './contract-oidc.ts';
import { metricsContract } from './contract-metrics.ts';
import { loginThrottleContract } from './contract-login-throttle.ts';
import { keyRevokeContract } from './contract-key-revoke.ts';
import { quotasContract } from './contract-quotas.ts';
import { emailContract } from './contract-email.ts';

storeContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

deliveryContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

oidcContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

quotasContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

emailContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

loginThrottleContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

keyRevokeContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});

metricsContract('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});
