import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import { until } from '../helpers/until.ts';
import { Workload } from '../helpers/workload.ts';

// kill -9 of a node in the middle of approvals, pass refreshes and step-ups, then a restart on the
// same database: every write the client saw acknowledged is there, no single-use token works twice,
// and each owner's audit trail is numbered without gaps. On the embedded SQLite file this is what
// WAL with synchronous=FULL must deliver; on PostgreSQL, what committing before answering delivers.

/** Runs the workload against a node, kills it with SIGKILL while requests are in flight, restarts it, verifies. */
async function crashAndRecover(env: Record<string, string>): Promise<void> {
  let node: ServerProcess | undefined;
  let restarted: ServerProcess | undefined;
  try {
    node = await startServer({ name: 'node before the crash', env });
    const baseUrl = node.baseUrl;
    const crashing = node;
    const work = await Workload.prepare(crashing, baseUrl);
    work.start();
    // Enough acknowledged writes of every kind, then the crash while the workers are mid-request.
    await until('acknowledged approvals, refreshes and step-ups', () => {
      const p = work.progress();
      return p.approvals >= 3 && p.refreshes >= 15 && p.stepups >= 2 ? true : undefined;
    }, { ms: 90_000, everyMs: 20 });
    const stopping = work.stop();
    await crashing.kill('SIGKILL');
    await stopping;
    assert.ok(!crashing.alive());

    // Same database, same public base URL (the issuer of every token); a new port.
    restarted = await startServer({ name: 'node after the crash', env: { ...env, BASE_URL: baseUrl } });
    await work.verify(restarted);
    for (const status of work.statuses.keys()) assert.ok(status < 500, `a ${status} answer before the crash`);
  } catch (e) {
    const logs = [node, restarted].map((n) => (n ? `--- ${n.name}\n${n.logs().slice(-3000)}` : '')).join('\n');
    throw new Error(`${(e as Error).message}\n${logs}`, { cause: e });
  } finally {
    await node?.stop();
    await restarted?.stop();
  }
}

describe('a node killed with SIGKILL mid-flight loses nothing it acknowledged', { timeout: 300_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const c of cleanups) await c();
  });

  it('on the embedded SQLite database (WAL, synchronous=FULL)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mandate-crash-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    await crashAndRecover({ DATA_DIR: dataDir, DATABASE_URL: '' });
  });

  it('on PostgreSQL', async () => {
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    await crashAndRecover({ DATABASE_URL: db.url });
  });
});
