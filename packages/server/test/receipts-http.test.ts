import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ReceiptError, verifyReceipt, type Receipt } from '@mandate/site';
import type { JSONWebKeySet } from 'jose';
import fc from 'fast-check';
import { REPO_ROOT } from './helpers/child-process.ts';
import { requestArb, routesOf, sendRaw, type OpenApi } from './helpers/fuzz-requests.ts';
import { HttpOwner, call, expectStatus, remoteAccessRequest, remoteActivity, remoteAgent, remoteDecide, remoteGrant, remoteStepupRequest, type RemoteAgent } from './helpers/over-http.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';

// Receipts (decisions §29) from a real service process: the agent that filed a step-up or an agent
// approval fetches the receipt once the owner approved with a passkey, and the site SDK checks it
// with nothing but the service's JWKS and origin, in a process of its own with no way to the service.

/** verifyReceipt from @mandate/site in a child process given only the receipt, the JWKS and the origin (stdin). */
function verifyElsewhere(input: { receipt: unknown; jwks: unknown; origin: string; issuer?: string; expected?: unknown }): { ok: true; txn: string } | { ok: false; code: string } {
  const script = `
    import { verifyReceipt } from '@mandate/site';
    let text = '';
    for await (const chunk of process.stdin) text += chunk;
    const { receipt, jwks, origin, issuer, expected } = JSON.parse(text);
    try {
      const v = await verifyReceipt(receipt, { jwks, origin, issuer, expected });
      console.log(JSON.stringify({ ok: true, txn: v.receipt.txn }));
    } catch (e) {
      console.log(JSON.stringify({ ok: false, code: e.code ?? String(e) }));
    }`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, input: JSON.stringify(input), encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as { ok: true; txn: string } | { ok: false; code: string };
}

describe('receipts over HTTP (decisions §29)', () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let agent: RemoteAgent;
  let jwks: JSONWebKeySet;

  before(async () => {
    server = await startServer({ name: 'receipts' });
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'receipts' });
    agent = await remoteAgent(server, owner, 'Shopper');
    await remoteGrant(server, owner, agent, 'shop.example');
    jwks = expectStatus(await call<JSONWebKeySet>(server, 'GET', '/api/v1/jwks'), 200, 'jwks').body;
  });
  after(() => server?.stop());

  const receiptOf = async (txn: string, who: RemoteAgent = agent) => call<Receipt>(server, 'GET', `/api/v1/receipts/${txn}`, undefined, { 'x-agent-jwt': await who.jwt() });

  it('an approved step-up leaves a receipt the site SDK checks offline with the JWKS; Activity says a receipt was kept', async () => {
    const txn = expectStatus(await remoteStepupRequest(server, agent, 'shop.example', 'checkout'), 200, 'step-up').body.txn_id;
    const waiting = await receiptOf(txn);
    assert.equal(waiting.status, 409);
    assert.match(String((waiting.body as unknown as { detail: string }).detail), /not answered/);

    await owner.approve(txn);
    const receipt = expectStatus(await receiptOf(txn), 200, 'receipt').body;
    assert.deepEqual([receipt.v, receipt.txn, receipt.aud, receipt.action, receipt.details_digest, receipt.user], [1, txn, 'shop.example', 'checkout', null, owner.id]);
    assert.equal(receipt.credential_key.kty, 'EC');

    const expected = { txn, aud: 'shop.example', action: 'checkout', details_digest: null, user: owner.id };
    const verified = await verifyReceipt(receipt, { jwks, origin: server.baseUrl, expected });
    assert.ok(Date.parse(verified.registered_at) <= Date.parse(receipt.approved_at));
    assert.deepEqual(verifyElsewhere({ receipt, jwks, origin: server.baseUrl, expected }), { ok: true, txn });
    assert.deepEqual(verifyElsewhere({ receipt: { ...receipt, action: 'refund' }, jwks, origin: server.baseUrl }), { ok: false, code: 'challenge_mismatch' });
    assert.deepEqual(verifyElsewhere({ receipt, jwks: { keys: [] }, origin: server.baseUrl }), { ok: false, code: 'attestation_invalid' });
    assert.deepEqual(verifyElsewhere({ receipt, jwks, origin: 'https://mandate.example' }), { ok: false, code: 'attestation_invalid' }, 'attested by another issuer');
    assert.deepEqual(verifyElsewhere({ receipt, jwks, origin: 'https://mandate.example', issuer: server.baseUrl }), { ok: false, code: 'origin_mismatch' });
    await assert.rejects(verifyReceipt(receipt, { jwks, origin: server.baseUrl, expected: { ...expected, action: 'refund' } }), (e: unknown) => e instanceof ReceiptError && e.code === 'receipt_unexpected');

    // Asked again: the same assertion, attested afresh.
    const again = expectStatus(await receiptOf(txn), 200, 'receipt again').body;
    assert.deepEqual({ ...again, attestation: '' }, { ...receipt, attestation: '' });

    const approved = (await remoteActivity(server, owner)).find((a) => a.action === 'stepup.approved' && a.detail['txn_id'] === txn);
    assert.equal(approved?.detail['receipt'], true, JSON.stringify(approved));
  });

  it('an agent approval leaves one too', async () => {
    const filed = expectStatus(await call<{ txn_id: string; status: string }>(server, 'POST', '/api/v1/agent-approval', { agent_id: agent.id, agent_jwt: await agent.jwt(), site: 'mail.example', action: 'send_email' }), 200, 'agent approval');
    assert.equal(filed.body.status, 'pending');
    await owner.approve(filed.body.txn_id);
    const receipt = expectStatus(await receiptOf(filed.body.txn_id), 200, 'receipt').body;
    await verifyReceipt(receipt, { jwks, origin: server.baseUrl, expected: { txn: filed.body.txn_id, aud: 'mail.example', action: 'send_email', user: owner.id } });
  });

  it('only for the agent that filed it: no header 401, another agent or an unknown txn 404, a malformed id 400, no receipt 409', async () => {
    const txn = expectStatus(await remoteStepupRequest(server, agent, 'shop.example', 'pay'), 200, 'step-up').body.txn_id;
    await owner.approve(txn);
    expectStatus(await call(server, 'GET', `/api/v1/receipts/${txn}`), 401, 'no X-Agent-JWT');
    expectStatus(await call(server, 'GET', `/api/v1/receipts/${txn}`, undefined, { 'x-agent-jwt': 'not-a-jwt' }), 401, 'a malformed agent JWT');
    const other = await remoteAgent(server, owner, 'Other');
    expectStatus(await receiptOf(txn, other), 404, 'another agent of the same owner');
    expectStatus(await receiptOf('t_unknown0000000000000000'), 404, 'unknown txn');
    for (const bad of ['x', 'ag_abc', 't_UPPER', `t_${'a'.repeat(80)}`, '%00']) {
      const reply = await receiptOf(bad);
      // 422: longer than any id, refused by the route's schema as at every txn route.
      assert.ok([400, 404, 422].includes(reply.status), `${bad}: ${reply.status}`);
    }
    expectStatus(await receiptOf('ag_abc'), 400, 'not a request id');

    // An access request (no receipt kind), a denied step-up: 409 saying why.
    const access = expectStatus(await remoteAccessRequest(server, other, 'books.example'), 200, 'access request').body.txn_id;
    expectStatus(await remoteDecide(server, owner, access), 200, 'approve access');
    assert.match(JSON.stringify(expectStatus(await receiptOf(access, other), 409, 'access request').body), /only step-ups and agent approvals/);
    const denied = expectStatus(await remoteStepupRequest(server, agent, 'shop.example', 'delete'), 200, 'step-up').body.txn_id;
    await owner.deny(denied);
    assert.match(JSON.stringify(expectStatus(await receiptOf(denied), 409, 'denied').body), /denied/);

    // Malformed requests of every kind to this route (the fuzz test's generator, on this route alone): a 4xx with a detail, never a 5xx.
    const spec = expectStatus(await call<OpenApi>(server, 'GET', '/openapi.json'), 200, 'openapi').body;
    const routes = routesOf(spec).filter((r) => r.path === '/api/v1/receipts/{txn_id}');
    assert.equal(routes.length, 1, 'the route is in the OpenAPI description');
    const genuine = { sessionToken: owner.auth.authorization?.slice('Bearer '.length) ?? '', agentId: agent.id, agentJwt: await agent.jwt(), userId: owner.id, site: 'shop.example', txnId: txn };
    await fc.assert(fc.asyncProperty(requestArb(routes, genuine), async (r) => {
      const answer = await sendRaw(server.port, r);
      if (answer === 'refused-locally') return;
      assert.ok(answer.status < 500, `${answer.status} ${answer.body.slice(0, 200)} for ${r.method} ${r.path.slice(0, 200)}`);
    }), { numRuns: 300 });

    // A revoked agent is refused like at every agent route.
    await owner.flag(agent.id, 'revoked');
    expectStatus(await receiptOf(txn), 403, 'revoked agent');
  });
});
