import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import type { Store } from '../../src/store/ports/index.ts';
import { freshPostgresDatabase } from './postgres.ts';
import { startServer, type ServerProcess } from './server-process.ts';

export interface ServerWithStore {
  /** The server process once `before` has run. */
  node: ServerProcess | undefined;
  /** Opens the server's own database in the test (to seed what HTTP cannot make quickly); close it after. */
  openStore(): Promise<Store>;
}

/**
 * Registers, in the calling suite, a built server on a fresh database of `backend` (a SQLite folder
 * or a PostgreSQL database) that the test can open too; stopped and removed after the suite.
 */
export function serverWithStore(backend: 'sqlite' | 'postgres', folderPrefix: string, env: () => Record<string, string> = () => ({})): ServerWithStore {
  let cleanup: () => Promise<void> = async () => {};
  let open: (() => Promise<Store>) | undefined;
  const handle: ServerWithStore = {
    node: undefined,
    openStore: () => {
      if (!open) throw new Error('the server of this suite has not started');
      return open();
    },
  };
  before(async () => {
    if (backend === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), folderPrefix));
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
      handle.node = await startServer({ name: 'service', env: { ...env(), DATA_DIR: dir, DATABASE_URL: '' }, healthyWithinMs: 90_000 });
      open = () => openSqliteStore(dir);
    } else {
      const db = await freshPostgresDatabase();
      cleanup = db.drop;
      handle.node = await startServer({ name: 'service', env: { ...env(), DATABASE_URL: db.url }, healthyWithinMs: 90_000 });
      open = () => openPostgresStore(db.url);
    }
  });
  after(async () => {
    await handle.node?.stop();
    await cleanup();
  });
  return handle;
}
