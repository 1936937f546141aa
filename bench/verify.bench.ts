/**
 * Cloud verification throughput: POST /api/v1/verify (pass + DPoP proof + revocation + jti) measured
 * in-process (Fastify inject) against two baselines taken in the same run on the same machine:
 *  - GET /api/healthz, the cheapest route that touches the database (HTTP + one query);
 *  - the bare crypto floor: two ES256 signature checks with jose (pass + proof).
 * Run: node --import tsx bench/verify.bench.ts [N] [sqlite|postgres]   (from the repository root)
 * Prints figures and ratios; asserts nothing about time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { compactVerify, importJWK, decodeProtectedHeader } from 'jose';
import { createAgentJwt, createDpopProof, generateAgentKeyPair } from '@mandate/protocol';
import pg from 'pg';
import { buildApp } from '../packages/server/src/app.ts';
import { parseConfig } from '../packages/server/src/config/config.ts';
import { newId } from '../packages/server/src/domain/ids.ts';
import { openSqliteStore } from '../packages/server/src/store/sqlite/open.ts';
import { openPostgresStore } from '../packages/server/src/store/postgres/open.ts';

const N = Number(process.argv[2] ?? 2000);
const backend = process.argv[3] === 'postgres' ? 'postgres' : 'sqlite';
const BASE = 'http://localhost:8080';

async function openStore() {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-bench-'));
  if (backend === 'sqlite') return { dir, store: await openSqliteStore(dir), drop: async () => {} };
  const name = `mandate_bench_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const store = await openPostgresStore(`postgres://postgres@127.0.0.1:5432/${name}`);
  return {
    dir,
    store,
    drop: async () => {
      const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

async function timeIt(label: string, n: number, run: (i: number) => Promise<void>): Promise<number> {
  for (let i = 0; i < Math.min(50, n); i++) await run(i); // warm-up
  const start = performance.now();
  for (let i = 0; i < n; i++) await run(i);
  const ms = performance.now() - start;
  const perSec = (n / ms) * 1000;
  console.log(`${label.padEnd(44)} ${perSec.toFixed(0).padStart(8)} /s   ${((ms / n) * 1000).toFixed(0).padStart(6)} µs each`);
  return perSec;
}

const { dir, store, drop } = await openStore();
const config = parseConfig({ BASE_URL: BASE, DATA_DIR: dir, LOG_LEVEL: 'silent' });
const { app } = await buildApp({ config, store, logger: false });

// An owner, an agent and a grant, then one pass through the real token endpoint.
const signUp = await app.inject({ method: 'POST', url: '/api/users', payload: { email: 'bench@example.com', password: 'bench-password' } });
const auth = { authorization: `Bearer ${(signUp.json() as { session_token: string }).session_token}` };
const { privateKey, publicJwk } = await generateAgentKeyPair();
const agentId = (await app.inject({ method: 'POST', url: '/api/agents', headers: auth, payload: { name: 'bench', jwk: publicJwk } })).json().id as string;
const userId = (await app.inject({ url: '/api/me', headers: auth })).json().id as string;
await store.grants.create({
  id: newId('gr'), userId, agentId, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active',
  createdAt: Date.now(), expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null,
});
const tokenRes = await app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agentId, site: 'shop.example', agent_jwt: await createAgentJwt(privateKey, agentId) } });
const pass = tokenRes.json().access_token as string;
const url = 'https://shop.example/orders';
const total = N + 50;
const proofs = await Promise.all(Array.from({ length: total }, () => createDpopProof(privateKey, publicJwk, { htm: 'GET', htu: url, accessToken: pass })));

console.log(`\nverify benchmark: ${N} requests, ${backend}, node ${process.version}\n`);
const health = await timeIt('baseline: GET /api/healthz (HTTP + 1 query)', N, async () => {
  const r = await app.inject({ url: '/api/healthz' });
  if (r.statusCode !== 200) throw new Error(r.body);
});
const kid = decodeProtectedHeader(pass).kid as string;
const passKey = (await app.inject({ url: '/api/v1/jwks' })).json().keys.find((k: { kid: string }) => k.kid === kid);
const passPublic = await importJWK(passKey, 'ES256');
const agentPublic = await importJWK(publicJwk, 'ES256');
const crypto = await timeIt('baseline: 2 x ES256 verify (jose)', N, async (i) => {
  await compactVerify(pass, passPublic);
  await compactVerify(proofs[i % total] as string, agentPublic);
});
let p = 0;
const verify = await timeIt('POST /api/v1/verify (pass + DPoP + jti)', N, async () => {
  const r = await app.inject({ method: 'POST', url: '/api/v1/verify', payload: { access_token: pass, dpop: proofs[p++], method: 'GET', url, site: 'shop.example' } });
  if (!r.json().valid) throw new Error(r.body);
});
console.log(`\nverify / healthz baseline: ${(verify / health).toFixed(2)}x   verify / crypto floor: ${(verify / crypto).toFixed(2)}x\n`);

await app.close();
await store.close();
await drop();
rmSync(dir, { recursive: true, force: true });
