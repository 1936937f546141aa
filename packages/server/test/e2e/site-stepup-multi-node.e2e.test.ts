import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detailsDigestOf } from '@mandate/protocol';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import { HttpOwner, call, expectStatus, remoteAgent, remoteDecide, remoteGrant, remoteToken, type RemoteAgent } from '../helpers/over-http.ts';

// The site step-up over two real server processes and one PostgreSQL database: a site's long polls
// wait on either node while the owner answers on the other; the answer ends every wait at once, and
// exactly one poll, on whichever node, collects the step-up token.

type Answer = { status: string; stepup_token?: string; stepup_token_error?: string };

describe('site step-up across two nodes', () => {
  const nodes: ServerProcess[] = [];
  let db: { url: string; drop: () => Promise<void> } | undefined;
  let dataDir = '';
  let owner: HttpOwner;
  let agent: RemoteAgent;

  before(async () => {
    db = await freshPostgresDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'mandate-site-stepup-'));
    const env = { DATABASE_URL: db.url, DATA_DIR: dataDir };
    const a = await startServer({ name: 'node A', env });
    nodes.push(a, await startServer({ name: 'node B', env: { ...env, BASE_URL: a.baseUrl } }));
    owner = await HttpOwner.signUp(a, a.baseUrl, { label: 'site-stepup-nodes' });
    agent = await remoteAgent(a, owner, 'Payer');
    await remoteGrant(a, owner, agent, 'shop.example');
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const node = (i: number): ServerProcess => {
    const n = nodes[i % nodes.length];
    assert.ok(n);
    return n;
  };

  it('8 polls on both nodes; the owner approves on the other: all end early, exactly one gets the token, and it verifies', async () => {
    const pass = expectStatus(await remoteToken(node(1), agent, 'shop.example'), 200, 'pass').body.access_token;
    const details = { summary: 'Transfer 250.00 EUR to ACME', digest: detailsDigestOf({ amount: '250.00', to: 'ACME' }) };
    const txn = expectStatus(await call<{ txn_id: string }>(node(0), 'POST', '/api/v1/stepup/site', { access_token: pass, action: 'transfer', details }), 200, 'file').body.txn_id;

    const started = performance.now();
    const polls = Array.from({ length: 8 }, (_, i) => call<Answer>(node(i), 'GET', `/api/v1/stepup/site/${txn}?wait=20`, undefined, { authorization: `Bearer ${pass}` }));
    await new Promise((r) => setTimeout(r, 500));
    expectStatus(await remoteDecide(node(1), owner, txn), 200, 'approve on node B');
    const answers = await Promise.all(polls);
    const took = performance.now() - started;
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.ok(took < 8000, `the polls ended ${took} ms after they began, not at wait=20`);
    const tokens = answers.map((a) => a.body.stepup_token).filter((t): t is string => t !== undefined);
    assert.equal(tokens.length, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.deepEqual(new Set(answers.filter((a) => a.body.stepup_token === undefined).map((a) => a.body.status)), new Set(['consumed']));

    const used = await call<{ valid: boolean; error?: string }>(node(1), 'POST', '/api/v1/stepup/verify', { stepup_token: tokens[0], site: 'shop.example', action: 'transfer', details_digest: details.digest });
    assert.equal(used.body.valid, true, JSON.stringify(used.body));
    const receipt = await call<{ txn: string }>(node(0), 'GET', `/api/v1/receipts/${txn}`, undefined, { authorization: `Bearer ${pass}` });
    assert.equal(expectStatus(receipt, 200, 'receipt').body.txn, txn);
  });

  it('a poll whose site hung up collects nothing: the token waits for the next poll', async () => {
    const pass = expectStatus(await remoteToken(node(0), agent, 'shop.example'), 200, 'pass').body.access_token;
    const txn = expectStatus(await call<{ txn_id: string }>(node(0), 'POST', '/api/v1/stepup/site', { access_token: pass, action: 'transfer' }), 200, 'file').body.txn_id;
    const hangUp = new AbortController();
    const abandoned = fetch(`${node(0).url}/api/v1/stepup/site/${txn}?wait=20`, { headers: { authorization: `Bearer ${pass}` }, signal: hangUp.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 400));
    hangUp.abort();
    assert.ok((await abandoned) instanceof Error, 'the site hung up');
    expectStatus(await remoteDecide(node(1), owner, txn), 200, 'approve');
    // Had the abandoned wait gone on, it would have collected the token within 250 ms.
    await new Promise((r) => setTimeout(r, 1000));
    const next = expectStatus(await call<Answer>(node(1), 'GET', `/api/v1/stepup/site/${txn}`, undefined, { authorization: `Bearer ${pass}` }), 200, 'next poll').body;
    assert.equal(next.status, 'approved', JSON.stringify(next));
    assert.ok(next.stepup_token, 'the next poll gets the token');
  });
});
