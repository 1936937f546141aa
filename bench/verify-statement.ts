/**
 * What cloud verify's one PostgreSQL statement costs (store/postgres/hot-path.ts, VERIFY_LOOKUPS: the
 * jtis consumed and the agents' standings read, one statement and one commit per batch), beside the
 * same round trip doing nothing with the same parameters (the floor) and each half alone. For each
 * batch size, statements are sent one after another on one connection into a growing table, as cloud
 * verify sends them (one in flight); printed per statement: wall time, and the CPU of all of
 * PostgreSQL's processes. `synchronous_commit=off` is a measurement only (what the commit's flush
 * costs): the service commits every single-use key durably.
 *
 *   node --import tsx bench/verify-statement.ts [--keys 1,6,12,40] [--statements 2000]
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CONSUME, READ_STANDINGS, VERIFY_LOOKUPS } from '../packages/server/src/store/postgres/hot-path.ts';
import { createBenchDb } from './lib/stores.ts';
import { seedAgents, seedOwner } from './lib/seed.ts';
import { postgresCpuMs } from './lib/processes.ts';
import { markdownTable } from './lib/table.ts';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = argv.indexOf(name);
  return i < 0 ? def : (argv[i + 1] ?? def);
};
const sizes = opt('--keys', '1,6,12,40').split(',').map(Number);
const statements = Number(opt('--statements', '2000'));

/** The parameters of VERIFY_LOOKUPS: agent ids, grant ids, then the jtis' namespaces, keys, expiries, and now. */
type Params = [string[], string[], string[], string[], number[], number];

const theStatement = (c: pg.Client, p: Params) => c.query({ ...VERIFY_LOOKUPS, values: p });

const variants: { name: string; run: (c: pg.Client, p: Params) => Promise<unknown>; syncCommitOff?: true }[] = [
  { name: 'floor: the same parameters, nothing done', run: (c, p) => c.query({ name: 'bench_floor', text: 'SELECT $1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint', values: p }) },
  { name: 'standings read alone', run: (c, p) => c.query({ ...READ_STANDINGS, values: [p[0], p[1]] }) },
  { name: 'jtis consumed alone (commits)', run: (c, p) => c.query({ ...CONSUME, values: [p[2], p[3], p[4], p[5]] }) },
  { name: 'the statement (VERIFY_LOOKUPS)', run: theStatement },
  { name: 'the statement, synchronous_commit=off (measurement only)', run: theStatement, syncCommitOff: true },
];

const db = await createBenchDb('postgres');
try {
  const store = await db.openStore();
  const now = Date.now();
  const [agent] = await seedAgents(store, await seedOwner(store, now), 1, now);
  await store.close();
  if (!agent) throw new Error('no agent');
  const client = new pg.Client({ connectionString: db.databaseUrl });
  await client.connect();
  const grantId = String((await client.query<{ id: string }>('SELECT id FROM grants WHERE agent_id = $1', [agent.id])).rows[0]?.id);
  const params = (keys: number): Params => {
    const jtis = Array.from({ length: keys }, () => randomBytes(16).toString('base64url')).sort();
    return [[agent.id], [grantId], jtis.map(() => 'dpop'), jtis, jtis.map(() => now + 250_000), Date.now()];
  };
  const measure = async (run: (p: Params) => Promise<unknown>, keys: number) => {
    const cpu0 = postgresCpuMs();
    const t0 = performance.now();
    for (let i = 0; i < statements; i++) await run(params(keys));
    return { wallUs: ((performance.now() - t0) * 1000) / statements, cpuUs: ((postgresCpuMs() - cpu0) * 1000) / statements };
  };
  const body: string[][] = [];
  for (const keys of sizes) {
    for (const v of variants) {
      const off = v.syncCommitOff === true;
      if (off) await client.query('SET synchronous_commit = off');
      await measure((p) => v.run(client, p), keys); // warm: plans, caches, the table's first pages
      const m = await measure((p) => v.run(client, p), keys);
      if (off) await client.query('SET synchronous_commit = on');
      body.push([String(keys), v.name, m.wallUs.toFixed(0), m.cpuUs.toFixed(0)]);
    }
  }
  await client.end();
  console.log(markdownTable(`Cloud verify's statement on PostgreSQL, ${statements} statements each, one at a time`, ['jtis', 'statement', 'wall µs', 'PostgreSQL CPU µs'], body, new Set([0, 2, 3])));
} finally {
  await db.drop();
}
