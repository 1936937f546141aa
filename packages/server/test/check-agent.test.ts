import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { directoryBody, signRequest } from '@mandate/protocol';
import { signatureHeaders } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import { testApp, json, expectStatus, remoteAddress, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { publishKey, wbaKey, type WbaKey } from './helpers/wba.ts';
import { seconds } from '../src/clock.ts';

interface Checked { outcome: string; agent: string | null; ours: boolean; keys: string[]; detail: string }

/** A pasted request for `host`, signed by `key` naming `agent` (unless headers are given). */
function pasted(host: string, headers: Record<string, string>): string {
  return [`GET /products?page=2 HTTP/1.1`, `Host: ${host}`, 'User-Agent: test', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
}

/** POST /api/v1/check-agent (decisions §22) on SQLite and PostgreSQL; a foreign directory from a loopback stand-in. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`check-agent (${backend})`, () => {
    let t: TestApp;
    let foreign: Server;
    let foreignUrl: string;
    const foreignKey = wbaKey();
    before(async () => {
      t = await testApp({ backend, env: { OUTBOUND_ALLOW_LOOPBACK: 'true' } });
      foreign = createServer((req, res) => {
        if (req.url === '/.well-known/http-message-signatures-directory') {
          res.writeHead(200, { 'content-type': 'application/http-message-signatures-directory+json' });
          return res.end(directoryBody([foreignKey.jwk]));
        }
        if (req.url === '/moved') {
          res.writeHead(302, { location: '/.well-known/http-message-signatures-directory' });
          return res.end();
        }
        if (req.url === '/big') return res.end(`{"keys":[],"pad":"${'x'.repeat(70_000)}"}`);
        return res.writeHead(404).end();
      });
      await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
      foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
    });
    after(async () => {
      await t.close();
      await new Promise((r) => foreign.close(r));
    });

    const check = (payload: unknown, address = remoteAddress()) => t.app.inject({ method: 'POST', url: '/api/v1/check-agent', payload: payload as Record<string, unknown>, remoteAddress: address });
    const checked = async (payload: unknown): Promise<Checked> => {
      const res = await check(payload);
      expectStatus(res, 200);
      return json<Checked>(res);
    };
    const signed = (key: WbaKey, agent: string, over: { created?: number; lifetimeSec?: number; authority?: string } = {}) =>
      signRequest({ authority: over.authority ?? 'shop.example', signatureAgent: agent, key, created: over.created ?? seconds(t.clock.now()), lifetimeSec: over.lifetimeSec ?? 60 });

    it('verifies a request signed by one of our agents; lists its keys by address', async () => {
      const agent = await createAgent(t);
      const reg = await publishKey(t, agent);
      const r = await checked({ request: pasted('shop.example', signed(reg.key, reg.signature_agent)) });
      assert.deepEqual(r, { outcome: 'verified', agent: reg.signature_agent, ours: true, keys: [reg.key.keyid], detail: r.detail });
      const a = await checked({ address: reg.signature_agent });
      assert.deepEqual([a.outcome, a.ours, a.keys], ['found', true, [reg.key.keyid]]);
      // Revoked: the directory empties, the request can no longer be verified.
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: agent.owner.auth, payload: { flag: 'revoked' } }), 200);
      const after = await checked({ request: pasted('shop.example', signed(reg.key, reg.signature_agent)) });
      assert.deepEqual([after.outcome, after.keys], ['unverified', []]);
    });

    it('interop: a request signed with Cloudflare\'s web-bot-auth verifies against our directory', async () => {
      const agent = await createAgent(t);
      const reg = await publishKey(t, agent);
      const request = new Request('https://shop.example/products', { headers: { 'Signature-Agent': `"${reg.signature_agent}"` } });
      const created = new Date(t.clock.now());
      const h = await signatureHeaders(request, await signerFromJWK({ ...reg.key.privateJwk, kid: reg.key.keyid } as JsonWebKey), { created, expires: new Date(created.getTime() + 60_000) });
      const r = await checked({ request: pasted('shop.example', { 'Signature-Agent': `"${reg.signature_agent}"`, ...h }) });
      assert.equal(r.outcome, 'verified', r.detail);
      // The dictionary form of Signature-Agent, member named like the signature's label.
      const dict = { 'Signature-Agent': `sig1="${reg.signature_agent}"` };
      const h2 = await signatureHeaders(new Request('https://shop.example/', { headers: dict }), await signerFromJWK({ ...reg.key.privateJwk, kid: reg.key.keyid } as JsonWebKey), { created, expires: new Date(created.getTime() + 60_000) });
      const r2 = await checked({ request: pasted('shop.example', { ...dict, ...h2 }) });
      assert.equal(r2.outcome, 'verified', r2.detail);
      assert.equal(r2.agent, reg.signature_agent);
    });

    it('judges invalid, unverified and unsigned requests', async () => {
      const agent = await createAgent(t);
      const reg = await publishKey(t, agent);
      const now = seconds(t.clock.now());
      const good = signed(reg.key, reg.signature_agent);
      const outcome = async (headers: Record<string, string>, host = 'shop.example') => (await checked({ request: pasted(host, headers) })).outcome;
      assert.equal(await outcome({}), 'unsigned');
      assert.equal(await outcome({ 'Signature-Agent': good['Signature-Agent'] }), 'unsigned');
      assert.equal(await outcome(good, 'other.example'), 'invalid', 'another authority');
      assert.equal(await outcome(signed(reg.key, reg.signature_agent, { created: now - 600, lifetimeSec: 60 })), 'invalid', 'expired');
      assert.equal(await outcome({ ...good, Signature: good.Signature.replace(/:(.)/, (_m, c: string) => `:${c === 'A' ? 'B' : 'A'}`) }), 'invalid');
      assert.equal(await outcome({ ...good, 'Signature-Input': good['Signature-Input'].replace('web-bot-auth', 'other') }), 'invalid', 'wrong tag');
      assert.equal(await outcome({ ...good, 'Signature-Input': '(((' }), 'invalid');
      assert.equal(await outcome({ 'Signature-Input': good['Signature-Input'], Signature: good.Signature }), 'unverified', 'no Signature-Agent');
      assert.equal(await outcome(signed(wbaKey(), reg.signature_agent)), 'unverified', 'a key not in the directory');
      assert.equal(await outcome(signed(reg.key, 'https://10.0.0.1/agent')), 'unverified', 'a private address');
      assert.equal(await outcome(signed(reg.key, 'ftp://x.example')), 'unverified');
      // Garbage in every header: an outcome, never a 5xx.
      for (const [input, sig] of [['sig1=("@authority" 5);tag="web-bot-auth"', 'sig1=:AAAA:'], ['sig1=("@x";a=@1700000000);tag="web-bot-auth"', 'sig1=:AAAA:'], ['sig1=();created=1.5', 'sig1=:AAAA:'], ['sig1="text"', 'sig1=:AAAA:'], ['sig1=()', 'sig1=5'], ['sig1=("@authority");tag="web-bot-auth"', 'sig1=:AAAA:, sig2']]) {
        const res = await check({ request: pasted('shop.example', { 'Signature-Agent': good['Signature-Agent'], 'Signature-Input': input ?? '', Signature: sig ?? '' }) });
        assert.equal(res.statusCode, 200, `${input}: ${res.body}`);
        assert.ok(['invalid', 'unverified'].includes(json<Checked>(res).outcome), input);
      }
    });

    it('fetches a foreign directory through the guard: verified, found; redirects and large bodies refused', async () => {
      const r = await checked({ request: pasted('shop.example', signed(foreignKey, foreignUrl)) });
      assert.deepEqual([r.outcome, r.ours, r.keys], ['verified', false, [foreignKey.keyid]], r.detail);
      const a = await checked({ address: foreignUrl });
      assert.deepEqual([a.outcome, a.keys], ['found', [foreignKey.keyid]]);
      const moved = await checked({ address: `${foreignUrl}/moved` });
      assert.equal(moved.outcome, 'unverified');
      assert.match(moved.detail, /redirect/);
      const big = await checked({ address: `${foreignUrl}/big` });
      assert.equal(big.outcome, 'unverified');
      assert.match(big.detail, /larger than/);
      assert.equal((await checked({ address: `${foreignUrl}/missing` })).outcome, 'unverified');
    });

    it('bad input: both or neither, over 16 kB, no request line or Host, wrong shapes: 4xx with a detail', async () => {
      for (const body of [{}, { request: pasted('a.example', {}), address: foreignUrl }]) {
        const res = await check(body);
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, /exactly one/);
      }
      const huge = await check({ request: pasted('a.example', { 'X-Pad': 'x'.repeat(16_400) }) });
      assert.ok([400, 422].includes(huge.statusCode));
      const multibyte = await check({ request: pasted('a.example', { 'X-Pad': 'é'.repeat(8_200) }) });
      expectStatus(multibyte, 400);
      assert.match(json<{ detail: string }>(multibyte).detail, /16384 bytes/);
      for (const text of ['hello', 'GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n', 'GET / HTTP/1.1\r\n: nameless\r\n', 'GET / HTTP/1.1\r\nHost: a b\r\n', 'GET / HTTP/1.1\r\nHost: a.example/x\r\n', 'GET http://[::1 HTTP/1.1\r\n']) {
        const res = await check({ request: text });
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, /^request: /);
      }
      for (const body of [{ request: 5 }, { address: '' }, { address: ['x'] }, 'plain']) {
        const res = await check(body);
        assert.ok([400, 415, 422].includes(res.statusCode), `${JSON.stringify(body)}: ${res.statusCode}`);
      }
      assert.equal((await checked({ address: 'not a url' })).outcome, 'unverified');
    });

    it('allows 30 checks per 10 minutes per client address, then 429 with Retry-After', async () => {
      const address = remoteAddress();
      for (let i = 0; i < 30; i++) expectStatus(await check({ request: pasted('a.example', {}) }, address), 200);
      const res = await check({ request: pasted('a.example', {}) }, address);
      expectStatus(res, 429);
      assert.ok(Number(res.headers['retry-after']) > 0);
      t.clock.advance(600_000);
      expectStatus(await check({ request: pasted('a.example', {}) }, address), 200);
    });
  });
}

describe('/tools/check-agent (the HTML twin)', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('shows the forms; looks up an address; checks a pasted request posted as a form; shows refusals on the page', async () => {
    const empty = await t.app.inject({ url: '/tools/check-agent' });
    expectStatus(empty, 200);
    assert.match(String(empty.headers['content-type']), /^text\/html/);
    assert.match(empty.body, /<h1>Check an agent<\/h1>/);
    assert.doesNotMatch(empty.body, /Result:/);

    const agent = await createAgent(t);
    const reg = await publishKey(t, agent);
    const looked = await t.app.inject({ url: `/tools/check-agent?agent=${encodeURIComponent(reg.signature_agent)}`, remoteAddress: remoteAddress() });
    expectStatus(looked, 200);
    assert.match(looked.body, /outcome-found/);
    assert.ok(looked.body.includes(reg.key.keyid));

    const request = pasted('shop.example', signRequest({ authority: 'shop.example', signatureAgent: reg.signature_agent, key: reg.key, created: seconds(t.clock.now()), lifetimeSec: 60 }));
    const posted = await t.app.inject({ method: 'POST', url: '/tools/check-agent', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ request }).toString(), remoteAddress: remoteAddress() });
    expectStatus(posted, 200);
    assert.match(posted.body, /outcome-verified/);
    assert.ok(posted.body.includes('Signature-Agent: &quot;'), 'the pasted text is kept, escaped');

    const bad = await t.app.inject({ method: 'POST', url: '/tools/check-agent', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'request=<script>hello', remoteAddress: remoteAddress() });
    expectStatus(bad, 400);
    assert.match(bad.body, /class="tool-error"/);
    assert.ok(!bad.body.includes('<script>hello'));
    const address = remoteAddress();
    for (let i = 0; i < 30; i++) await t.app.inject({ url: '/tools/check-agent?agent=https%3A%2F%2F10.0.0.1', remoteAddress: address });
    const limited = await t.app.inject({ url: '/tools/check-agent?agent=https%3A%2F%2F10.0.0.1', remoteAddress: address });
    expectStatus(limited, 429);
    assert.ok(limited.headers['retry-after']);
    assert.match(limited.body, /Too many checks/);
  });
});
