import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgentJwt, createDpopProof, generateAgentKeyPair, LIMITS, STEPUP_TYP, type EcP256PublicJwk, type StepupClaims } from '@mandate/protocol';
import { SigningKeys } from '../../src/crypto/signing-keys.ts';
import { systemClock } from '../../src/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import type { Store } from '../../src/store/ports/index.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';

// Two real server processes over one PostgreSQL database, as deployed behind a load balancer. The
// same single-use token is presented to both nodes at once, over real HTTP: exactly one request may
// win, whichever node it reaches, and none may fail with a 5xx.

const N = 50;
const SITE = 'shop.example';
const SITE_URL = 'https://shop.example/orders';

const nodes: ServerProcess[] = [];
let db: { url: string; drop: () => Promise<void> } | undefined;
let store: Store | undefined;
let dataDir = '';

async function post(node: ServerProcess, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed };
}

const nodeFor = (i: number): ServerProcess => {
  const n = nodes[i % nodes.length];
  if (!n) throw new Error('no nodes');
  return n;
};

function assertNo5xx(results: { status: number; body: unknown }[]): void {
  for (const r of results) assert.ok(r.status < 500, `5xx: ${r.status} ${JSON.stringify(r.body)}\n${nodes.map((n) => `--- ${n.name}\n${n.logs()}`).join('\n')}`);
}

describe('two nodes over one PostgreSQL database', () => {
  let agent: { id: string; privateKey: CryptoKey; publicJwk: EcP256PublicJwk; jkt: string };
  let userId = '';
  let keys: SigningKeys;

  before(async () => {
    db = await freshPostgresDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'mandate-multinode-'));
    const env = { DATABASE_URL: db.url, DATA_DIR: dataDir };
    // A first: it creates the signing key; B then finds it in the shared database. One public base
    // URL for both (A's): it is the issuer of every pass, so a pass from A verifies on B.
    const a = await startServer({ name: 'node A', env });
    nodes.push(a);
    nodes.push(await startServer({ name: 'node B', env: { ...env, BASE_URL: a.baseUrl } }));

    // Owner and agent over HTTP, through both nodes.
    const email = `multi-${randomBytes(4).toString('hex')}@example.com`;
    const signUp = await post(nodeFor(0), '/api/users', { email, password: 'correct horse battery' });
    assert.equal(signUp.status, 200, JSON.stringify(signUp.body));
    userId = (signUp.body.user as { id: string }).id;
    const { privateKey, publicJwk } = await generateAgentKeyPair();
    const created = await post(nodeFor(1), '/api/agents', { name: 'Racer', jwk: publicJwk }, { authorization: `Bearer ${String(signUp.body.session_token)}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    agent = { id: String(created.body.id), privateKey, publicJwk, jkt: String(created.body.jkt) };

    // The approval itself is another part's flow: the grant goes straight into the shared database,
    // and step-up tokens are signed with the service key the nodes use (read from that database).
    store = await openPostgresStore(db.url, 2);
    await store.grants.create({
      id: newId('gr'), userId, agentId: agent.id, site: SITE, scopes: ['list'], userInfo: [], status: 'active',
      createdAt: Date.now(), expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null,
    });
    keys = new SigningKeys(store.signingKeys, systemClock, { encryption: null, graceSec: 86_400 });
    await keys.init();
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await store?.close();
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const token = async (node: ServerProcess, refreshToken?: string) =>
    post(node, '/api/v1/token', { agent_id: agent.id, site: SITE, agent_jwt: await createAgentJwt(agent.privateKey, agent.id), ...(refreshToken ? { refresh_token: refreshToken } : {}) });
  const dpop = (accessToken: string) => createDpopProof(agent.privateKey, agent.publicJwk, { htm: 'GET', htu: SITE_URL, accessToken });
  const mintStepup = () => {
    const iat = Math.floor(Date.now() / 1000);
    const claims: StepupClaims = {
      iss: nodeFor(0).baseUrl, sub: agent.id, aud: SITE, user: userId, act: ['checkout'], type: 'stepup',
      jti: randomBytes(16).toString('base64url'), iat, exp: iat + LIMITS.stepupLifetimeSec, cnf: { dpop: agent.jkt, jkt: agent.jkt },
    };
    return keys.sign({ ...claims }, STEPUP_TYP);
  };

  it('a pass issued by one node verifies on the other', async () => {
    const issued = await token(nodeFor(0));
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    const pass = String(issued.body.access_token);
    const onB = await post(nodeFor(1), '/api/v1/verify', { access_token: pass, dpop: await dpop(pass), method: 'GET', url: SITE_URL });
    assert.equal(onB.body.valid, true, JSON.stringify(onB.body));
  });

  it(`${N} uses of one step-up token across both nodes and both endpoints: exactly one`, async () => {
    const pass = String((await token(nodeFor(1))).body.access_token);
    const st = await mintStepup();
    const calls = await Promise.all(Array.from({ length: N }, async (_, i) =>
      i % 4 < 2
        ? { node: nodeFor(i), path: '/api/v1/verify', body: { access_token: pass, dpop: await dpop(pass), method: 'GET', url: SITE_URL, stepup_token: st, action: 'checkout' } }
        : { node: nodeFor(i), path: '/api/v1/stepup/verify', body: { stepup_token: st, site: SITE, action: 'checkout' } }));
    const results = await Promise.all(calls.map((c) => post(c.node, c.path, c.body)));
    assertNo5xx(results);
    for (const r of results) assert.equal(r.status, 200);
    assert.equal(results.filter((r) => r.body.valid === true).length, 1);
    for (const r of results.filter((x) => x.body.valid !== true)) assert.equal(r.body.error, 'stepup_used_or_expired', JSON.stringify(r.body));
  });

  it(`${N} uses of one refresh token across both nodes: exactly one`, async () => {
    const first = await token(nodeFor(0));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const refresh = String(first.body.refresh_token);
    const results = await Promise.all(Array.from({ length: N }, (_, i) => token(nodeFor(i), refresh)));
    assertNo5xx(results);
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    for (const r of results.filter((x) => x.status !== 200)) {
      assert.equal(r.status, 401, JSON.stringify(r.body));
      assert.equal(r.body.detail, 'refresh token already used or invalid');
    }
  });

  it(`${N} uses of one DPoP proof across both nodes: exactly one`, async () => {
    const pass = String((await token(nodeFor(0))).body.access_token);
    const body = { access_token: pass, dpop: await dpop(pass), method: 'GET', url: SITE_URL };
    const results = await Promise.all(Array.from({ length: N }, (_, i) => post(nodeFor(i), '/api/v1/verify', body)));
    assertNo5xx(results);
    for (const r of results) assert.equal(r.status, 200);
    assert.equal(results.filter((r) => r.body.valid === true).length, 1);
    for (const r of results.filter((x) => x.body.valid !== true)) assert.equal(r.body.error, 'dpop_replay', JSON.stringify(r.body));
  });
});
