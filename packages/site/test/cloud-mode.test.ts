import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVerifier, type MandateRequest, type VerifyResult } from '../src/index.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import { startStub, type Stub } from './helpers/stub-service.ts';

// Cloud mode against a stub of POST /api/v1/verify: what is sent, and that no verdict means no entry.

const outcome = (r: VerifyResult) => (r.ok ? 'ok' : `${r.status} ${r.error}`);
const VALID = { valid: true, agent_id: 'ag_1', agent_name: 'Shopper', user_id: 'u_1', site: 'shop.example', scopes: ['list', 'checkout'], user_info: {}, stepup: false };

/** A JWT-shaped pass whose (unverified) payload claims these scopes; the stub decides validity. */
const passClaiming = (scope: string[]) => `e30.${Buffer.from(JSON.stringify({ scope })).toString('base64url')}.sig`;
const request = (o: { pass?: string; stepup?: string; headers?: Record<string, string> } = {}): MandateRequest => ({
  method: 'POST',
  url: '/checkout?x=1',
  headers: {
    host: 'internal',
    authorization: `Bearer ${o.pass ?? passClaiming(['list', 'checkout'])}`,
    dpop: 'proof.proof.proof',
    ...(o.stepup === undefined ? {} : { 'x-service-stepup': o.stepup }),
    ...o.headers,
  },
});

describe('cloud mode', () => {
  let stub: Stub;
  const errors: Error[] = [];
  before(async () => {
    stub = await startStub();
  });
  after(() => stub.close());
  const verifier = (o: { serviceUrl?: string; timeoutMs?: number } = {}) =>
    createVerifier({ mode: 'cloud', serviceUrl: o.serviceUrl ?? stub.url, site: 'Shop.Example', publicBaseUrl: 'https://shop.example/', onError: (e) => errors.push(e), ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}) });
  const lastVerifyBody = () => stub.calls.filter((c) => c.path === '/api/v1/verify').at(-1)?.body as Record<string, unknown>;

  it('sends the pass, proof, method, rebuilt URL and site id; the answer becomes the result', async () => {
    stub.routes.set('/api/v1/verify', { status: 200, body: VALID });
    const r = await verifier().verify(request({ stepup: 'stepup-token' }));
    assert.deepEqual(r, { ok: true, agentId: 'ag_1', agentName: 'Shopper', userId: 'u_1', site: 'shop.example', scopes: ['list', 'checkout'], userInfo: {}, stepup: false });
    assert.deepEqual(lastVerifyBody(), { access_token: passClaiming(['list', 'checkout']), dpop: 'proof.proof.proof', method: 'POST', url: 'https://shop.example/checkout?x=1', site: 'shop.example' }, 'no step-up on a route without an action');
  });

  it('sends the step-up with its action on a sensitive route, unless the pass plainly lacks the scope', async () => {
    stub.routes.set('/api/v1/verify', { status: 200, body: { ...VALID, stepup: true } });
    const route = { scope: 'checkout', action: 'buy 1 x Desk lamp for 19.90 EUR' };
    assert.equal(outcome(await verifier().verify(request({ stepup: 'stepup-token' }), route)), 'ok');
    assert.equal(lastVerifyBody()['stepup_token'], 'stepup-token');
    assert.equal(lastVerifyBody()['action'], route.action);

    stub.routes.set('/api/v1/verify', { status: 200, body: { ...VALID, scopes: ['list'] } });
    assert.equal(outcome(await verifier().verify(request({ pass: passClaiming(['list']), stepup: 'stepup-token' }), route)), '403 insufficient_scope');
    assert.equal(lastVerifyBody()['stepup_token'], undefined, 'the step-up is kept for a request that can succeed');
  });

  it('takes the step-up token from X-AuthYourAgent-Stepup too (agents of the original system); both headers at once is one too many', async () => {
    stub.routes.set('/api/v1/verify', { status: 200, body: { ...VALID, stepup: true } });
    const route = { scope: 'checkout', action: 'buy 1 x Desk lamp for 19.90 EUR' };
    assert.equal(outcome(await verifier().verify(request({ headers: { 'X-AuthYourAgent-Stepup': 'legacy-token' } }), route)), 'ok');
    assert.equal(lastVerifyBody()['stepup_token'], 'legacy-token');
    const before = stub.calls.length;
    const both = await verifier().verify(request({ stepup: 'one', headers: { 'x-authyouragent-stepup': 'two' } }), route);
    assert.deepEqual(both, { ok: false, status: 401, error: 'stepup_invalid', description: 'send exactly one step-up token, in X-Service-Stepup (or X-AuthYourAgent-Stepup)' });
    assert.equal(stub.calls.length, before, 'refused before asking Mandate');
  });

  it('a refusal by Mandate is a 401 with its code', async () => {
    stub.routes.set('/api/v1/verify', { status: 200, body: { valid: false, error: 'dpop_replay', error_description: 'the DPoP proof jti was already used' } });
    const r = await verifier().verify(request());
    assert.deepEqual(r, { ok: false, status: 401, error: 'dpop_replay', description: 'the DPoP proof jti was already used' });
  });

  it('no verdict, no entry: unreachable, 5xx, off-contract or slow Mandate is a 503', async () => {
    const closedPort = await freePort();
    assert.equal(outcome(await verifier({ serviceUrl: `http://127.0.0.1:${closedPort}` }).verify(request())), '503 service_unavailable');
    for (const answer of [
      { status: 503, body: { detail: 'service unavailable' } },
      { status: 500 },
      { status: 302, headers: { location: 'http://elsewhere.example/' } },
      { status: 200, body: { valid: true } },
      { status: 200, body: { ...VALID, site: 'other.example' } },
      { status: 200, body: { valid: false, error: 'not_a_code' } },
      { status: 200, body: ['valid'] },
      { status: 200 },
    ]) {
      stub.routes.set('/api/v1/verify', answer);
      assert.equal(outcome(await verifier().verify(request())), '503 service_unavailable', JSON.stringify(answer));
    }
    const silent: Server = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      assert.equal(outcome(await verifier({ serviceUrl: `http://127.0.0.1:${port}`, timeoutMs: 200 }).verify(request())), '503 service_unavailable');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    assert.ok(errors.some((e) => /unreachable/.test(e.message)));
    const pass = passClaiming(['list', 'checkout']);
    assert.ok(errors.every((e) => !e.message.includes(pass.split('.')[1] ?? pass)), 'no token bytes in what is logged');
  });
});

describe('checks before Mandate is asked', () => {
  let stub: Stub;
  before(async () => {
    stub = await startStub();
    stub.routes.set('/api/v1/verify', { status: 200, body: VALID });
  });
  after(() => stub.close());
  const v = () => createVerifier({ mode: 'cloud', serviceUrl: stub.url, site: 'shop.example', publicBaseUrl: 'https://shop.example', onError: () => {} });
  const verifyCalls = () => stub.count('/api/v1/verify');

  it('refuses without calling Mandate: missing or repeated credentials, oversized tokens, bad action', async () => {
    const before = verifyCalls();
    const action = 'buy 1 x Desk lamp for 19.90 EUR';
    const cases: [MandateRequest, { action?: string }, string][] = [
      [request({ headers: { authorization: '' } }), {}, '401 invalid_request'],
      [request({ headers: { authorization: 'Basic abc' } }), {}, '401 invalid_request'],
      [request({ headers: { authorization: 'Bearer a b' } }), {}, '401 invalid_request'],
      [request({ headers: { authorization: `Bearer ${'a'.repeat(17000)}` } }), {}, '401 invalid_token'],
      [request({ headers: { dpop: '' } }), {}, '401 invalid_dpop'],
      [{ ...request(), headers: { ...(request().headers as Record<string, string>), dpop: ['a', 'b'] } } as MandateRequest, {}, '401 invalid_dpop'],
      [request({ headers: { dpop: 'a'.repeat(17000) } }), {}, '401 invalid_dpop'],
      [request({ stepup: 'x'.repeat(17000) }), { action }, '401 stepup_invalid'],
      [request({ stepup: 't' }), { action: 'pay\u202Eorder' }, '400 invalid_request'],
      [request({ stepup: 't' }), { action: '' }, '400 invalid_request'],
      [{ ...request(), method: 'GET /x' }, {}, '401 invalid_request'],
    ];
    for (const [req, route, expected] of cases) assert.equal(outcome(await v().verify(req, route)), expected, JSON.stringify(route));
    assert.equal(verifyCalls(), before);
  });

  it('stepup_required comes after the verdict of Mandate and names the action the owner must approve', async () => {
    const before = verifyCalls();
    const r = await v().verify(request(), { action: 'buy 1 x Desk lamp for 19.90 EUR' });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.action, 'buy 1 x Desk lamp for 19.90 EUR');
    assert.equal(verifyCalls(), before + 1, 'the pass is verified first: a refused one is never told to ask for a step-up');
  });

  it('takes Fetch API Headers, any header case, and the DPoP authorization scheme', async () => {
    const headers = new Headers({ Authorization: `DPoP ${passClaiming(['list'])}`, DPoP: 'proof.proof.proof', Host: 'internal' });
    assert.equal(outcome(await v().verify({ method: 'GET', url: '/orders', headers })), 'ok');
    assert.equal(outcome(await v().verify({ method: 'GET', url: '/orders', headers: { Authorization: `bearer ${passClaiming(['list'])}`, DPOP: 'p.p.p' } })), 'ok');
  });

  it('a route scope that no pass could carry is a bug, thrown at once', async () => {
    await assert.rejects(v().verify(request(), { scope: 'Orders Read' }), /not a valid scope/);
  });
});
