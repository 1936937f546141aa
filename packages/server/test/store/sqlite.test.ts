import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { storeContracts } from './contracts.ts';

storeContracts('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
