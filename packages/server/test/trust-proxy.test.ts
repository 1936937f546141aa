import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, unsafeDefaults } from '../src/config/config.ts';
import { configProblems } from './helpers/config-problems.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';
import { call } from './helpers/over-http.ts';

// TRUST_PROXY (decisions §25): false, a hop count, or a list of proxy addresses; `true` only as an
// explicit, loudly announced opt-in. Over real HTTP the client address is observed through the
// per-address sign-in limit: LOGIN_MAX_PER_ADDRESS=2 failures, then 429 for that address only.

const problems = configProblems;
const SAFE = { BASE_URL: 'https://m.example.com', KEY_ENCRYPTION_KEY: 'x'.repeat(32), ADMIN_EMAILS: 'a@b.c' };

describe('TRUST_PROXY setting', () => {
  it('is false by default, and takes false, a hop count or a list of proxies', () => {
    assert.deepEqual(parseConfig({}).trustProxy, { kind: 'none' });
    for (const v of ['false', 'FALSE', 'no', 'off', '0', ' ']) assert.deepEqual(parseConfig({ TRUST_PROXY: v }).trustProxy, { kind: 'none' }, v);
    assert.deepEqual(parseConfig({ TRUST_PROXY: '1' }).trustProxy, { kind: 'hops', hops: 1 });
    assert.deepEqual(parseConfig({ TRUST_PROXY: '2' }).trustProxy, { kind: 'hops', hops: 2 });
    assert.deepEqual(parseConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,loopback, ::1, fd00::/8, uniquelocal' }).trustProxy, {
      kind: 'proxies',
      proxies: ['10.0.0.1', '10.1.0.0/16', 'loopback', '::1', 'fd00::/8', 'uniquelocal'],
    });
    assert.deepEqual(unsafeDefaults(parseConfig({ ...SAFE, TRUST_PROXY: '1' })), []);
    assert.deepEqual(unsafeDefaults(parseConfig({ ...SAFE, TRUST_PROXY: '10.0.0.0/8' })), []);
  });

  it('keeps `true` as an explicit opt-in, announced at start as forgeable', () => {
    assert.deepEqual(parseConfig({ TRUST_PROXY: 'true' }).trustProxy, { kind: 'all' });
    const warnings = unsafeDefaults(parseConfig({ ...SAFE, TRUST_PROXY: 'true' }));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /TRUST_PROXY=true .*forge.*TRUST_PROXY=1/);
  });

  it('refuses anything else with a message that says what it takes', () => {
    for (const bad of ['maybe', '11', '-1', '1.5', '300.1.1.1', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/1', 'localhost', '10.0.0.1,,10.0.0.2', '10.0.0.0/', '*']) {
      const found = problems({ TRUST_PROXY: bad });
      assert.equal(found.length, 1, `${bad}: ${found.join('\n')}`);
      assert.match(found[0] ?? '', /^TRUST_PROXY: .*TRUST_PROXY takes false, the number of proxies in front/, bad);
    }
    assert.match(problems({ TRUST_PROXY: 'proxy.internal, 10.0.0.1' })[0] ?? '', /"proxy.internal" is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal/);
  });
});

/** A wrong password for a fresh address each time, so only the per-address limit can refuse. */
let n = 0;
const wrongLogin = (server: ServerProcess, xff?: string) =>
  call(server, 'POST', '/api/login', { email: `nobody${++n}@example.com`, password: 'wrong password' }, xff === undefined ? {} : { 'x-forwarded-for': xff });

describe('TRUST_PROXY over real HTTP', { timeout: 300_000 }, () => {
  const servers: ServerProcess[] = [];
  const start = async (trustProxy: string): Promise<ServerProcess> => {
    const s = await startServer({ name: `TRUST_PROXY=${trustProxy}`, env: { TRUST_PROXY: trustProxy, LOGIN_MAX_PER_ADDRESS: '2' }, healthyWithinMs: 90_000 });
    servers.push(s);
    return s;
  };
  let hops: ServerProcess;
  let listed: ServerProcess;
  let unlisted: ServerProcess;
  before(async () => {
    hops = await start('1');
    listed = await start('loopback');
    unlisted = await start('192.0.2.1');
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('1 hop behind an appending proxy: the right-most entry is the client; a forged left-most entry is not', async () => {
    // The proxy appended 203.0.113.9 (the address it saw) to what the client sent (6.6.6.6, 7.7.7.7).
    assert.equal((await wrongLogin(hops, '6.6.6.6, 203.0.113.9')).status, 401);
    assert.equal((await wrongLogin(hops, '7.7.7.7, 203.0.113.9')).status, 401);
    const refused = await wrongLogin(hops, '8.8.8.8, 203.0.113.9');
    assert.equal(refused.status, 429, 'a new forged entry does not buy a new allowance');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // Another client behind the same proxy is another address; the forged one never was a client.
    assert.equal((await wrongLogin(hops, '203.0.113.9, 203.0.113.10')).status, 401);
    assert.equal((await wrongLogin(hops, '6.6.6.6')).status, 401);
  });

  it('a list: only a listed peer has its X-Forwarded-For honoured, walking from the right', async () => {
    // The test connects from 127.0.0.1: listed (loopback).
    assert.equal((await wrongLogin(listed, '6.6.6.6, 203.0.113.20')).status, 401);
    assert.equal((await wrongLogin(listed, '7.7.7.7, 203.0.113.20')).status, 401);
    assert.equal((await wrongLogin(listed, '8.8.8.8, 203.0.113.20')).status, 429);
    // A proxy chain of listed addresses is walked past: 203.0.113.20 is still the client.
    assert.equal((await wrongLogin(listed, '203.0.113.20, 127.0.0.5')).status, 429);
    assert.equal((await wrongLogin(listed, '203.0.113.21')).status, 401);
    // Here 127.0.0.1 is not listed: whatever X-Forwarded-For says, the client is the peer itself.
    assert.equal((await wrongLogin(unlisted, '203.0.113.30')).status, 401);
    assert.equal((await wrongLogin(unlisted, '203.0.113.31')).status, 401);
    assert.equal((await wrongLogin(unlisted, '203.0.113.32')).status, 429);
    assert.equal((await wrongLogin(unlisted)).status, 429);
  });
});
