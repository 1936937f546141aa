import { openPostgresStore } from '../../src/store/postgres/open.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { storeContracts } from './contracts.ts';

storeContracts('postgres', async () => {
  const db = await freshPostgresDatabase();
  return { store: await openPostgresStore(db.url), cleanup: db.drop };
});
