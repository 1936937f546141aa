import { openPostgresStore } from '../../src/store/postgres/open.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { storeContract } from './contract.ts';
import { deliveryContract } from './contract-delivery.ts';
import { oidcContract } from './contract-oidc.ts';

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
