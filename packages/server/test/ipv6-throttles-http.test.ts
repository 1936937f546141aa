import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type ServerProcess } from './helpers/server-process.ts';
import { call, type Reply } from './helpers/over-http.ts';

// Attack tests (issue 22, item 4): every per-address limit used to count each IPv6 address alone,
// so one client with one /64 (2^64 addresses, a new one per request for free) was never throttled.
// The real server as its own process (SQLite: the counters and their keys are the same on both
// stores; the store side is in the contract suite). It runs with TRUST_PROXY=loopback, as behind a
// reverse proxy on the same host, and each request names its client in X-Forwarded-For: Fastify's
// proxy handling turns that into request.ip exactly as it does for a real proxy, and from there the
// service's path is the one a client connecting over IPv6 would take. (A test cannot connect from
// many real IPv6 sources: loopback has only ::1.) Unit tests of the keys: client-address.test.ts.

const PER_ADDRESS = 8; // LOGIN_MAX_PER_ADDRESS: small, so the /48 limit (4 times) is 32 guesses
const PER_ACCOUNT = 10;

/** Address `i` of the /64 `prefix` (four groups), spelled differently each time. */
const inSlash64 = (prefix: string, i: number): string => {
  const spellings = [`${prefix}:${i.toString(16)}:0:0:1`, `${prefix.toUpperCase()}::${(i + 1).toString(16).toUpperCase()}`, `${prefix}:0:0:${i.toString(16)}:ffff`];
  return spellings[i % spellings.length] ?? '';
};
const statuses = (replies: Reply[]): number[] => replies.map((r) => r.status);
const times = (n: number, status: number): number[] => Array<number>(n).fill(status);

/**
 * The limits count in fixed windows aligned to the clock (`now - now % window`). A block of requests
 * that must land in one window waits, when the current one ends within `marginMs`, for the next.
 */
async function clearOfWindowEdge(windowSec: number, marginMs = 30_000): Promise<void> {
  const left = windowSec * 1000 - (Date.now() % (windowSec * 1000));
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

describe('per-address limits key an IPv6 client by its /64 (and /48), over HTTP', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const owner = { email: `owner.${Date.now()}@example.com`, password: 'correct horse battery staple' };
  const logIn = (email: string, password: string, address: string) => call(server, 'POST', '/api/login', { email, password }, from(address));
  const redeem = (address: string) => call(server, 'POST', '/api/v1/agents/pair', { code: 'AAAA-AAAA', name: 'x' }, from(address));
  const signUp = (n: string, address: string) =>
    call(server, 'POST', '/api/users', { email: `signup.${n}.${Date.now()}@example.com`, password: 'long enough password' }, from(address));

  before(async () => {
    server = await startServer({
      name: 'ipv6 throttles',
      // A day-long sign-in window: the fixed windows are aligned to the clock, and none may end mid-test.
      env: { TRUST_PROXY: 'loopback', LOGIN_MAX_PER_ADDRESS: String(PER_ADDRESS), LOGIN_MAX_PER_ACCOUNT: String(PER_ACCOUNT), LOGIN_WINDOW_SECONDS: '86400' },
      healthyWithinMs: 90_000,
    });
    assert.equal((await call(server, 'POST', '/api/users', owner, from('192.0.2.200'))).status, 200);
  });
  after(() => server?.stop());

  it('40 wrong passwords from one /64 are throttled; the owner still signs in from home', async () => {
    const replies: Reply[] = [];
    for (let i = 0; i < 40; i++) replies.push(await logIn(owner.email, `guess-${i}`, inSlash64('2001:db8:a:1', i)));
    assert.deepEqual(statuses(replies), [...times(PER_ADDRESS, 401), ...times(40 - PER_ADDRESS, 429)]);
    assert.ok(Number(replies.at(-1)?.headers.get('retry-after')) > 0);
    assert.equal((await logIn(owner.email, owner.password, '2001:db8:b:1::7')).status, 200, 'the owner, from a /64 of their own');
  });

  it('guessing across accounts from many /64s of one /48 stops at 4 times the per-address limit', async () => {
    const replies: Reply[] = [];
    // 36 /64s of 2001:db8:c::/48, one guess each at an account nobody has.
    for (let i = 0; i < 4 * PER_ADDRESS + 4; i++) replies.push(await logIn(`nobody.${i}@example.com`, 'wrong', `2001:db8:c:${(i + 1).toString(16)}::1`));
    assert.deepEqual(statuses(replies), [...times(4 * PER_ADDRESS, 401), ...times(4, 429)]);
    assert.equal((await logIn('nobody@example.com', 'wrong', '2001:db8:d:1::1')).status, 401, 'another /48 is not affected');
  });

  it('sign-ups from one /64 stop at 10 per hour, from one /48 at 30', async () => {
    await clearOfWindowEdge(3600, 60_000);
    const first: Reply[] = [];
    for (let i = 0; i < 15; i++) first.push(await signUp(`a${i}`, inSlash64('2001:db8:e:1', i)));
    assert.deepEqual(statuses(first), [...times(10, 200), ...times(5, 429)], JSON.stringify(first.find((r) => r.status !== 200 && r.status !== 429)?.body));
    const more: Reply[] = [];
    for (const net of ['2001:db8:e:2', '2001:db8:e:3']) for (let i = 0; i < 10; i++) more.push(await signUp(`${net}.${i}`, inSlash64(net, i)));
    assert.deepEqual(statuses(more), times(20, 200));
    assert.equal((await signUp('fourth', '2001:db8:e:4::1')).status, 429, 'a fourth /64 of the /48');
    assert.equal((await signUp('elsewhere', '2001:db8:f:4::1')).status, 200, 'another /48');
  });

  it('pairing-code guesses from one /64 stop at 10, from one /48 at 30; an IPv4-mapped address counts as the IPv4 address', async () => {
    await clearOfWindowEdge(600);
    const one: Reply[] = [];
    for (let i = 0; i < 11; i++) one.push(await redeem(inSlash64('2001:db8:10:1', i)));
    assert.deepEqual(statuses(one), [...times(10, 400), 429]);
    const more: Reply[] = [];
    for (const net of ['2001:db8:10:2', '2001:db8:10:3']) for (let i = 0; i < 10; i++) more.push(await redeem(inSlash64(net, i)));
    assert.deepEqual(statuses(more), times(20, 400));
    assert.equal((await redeem('2001:db8:10:4::1')).status, 429, 'a fourth /64 of the /48');

    const v4 = ['203.0.113.9', '::ffff:203.0.113.9', '::FFFF:CB00:7109', '0:0:0:0:0:ffff:203.0.113.9'];
    const mapped: Reply[] = [];
    for (let i = 0; i < 11; i++) mapped.push(await redeem(v4[i % v4.length] ?? ''));
    assert.deepEqual(statuses(mapped), [...times(10, 400), 429]);
  });

  it('passkey sign-in from one /64 stops at 30 steps per 5 minutes', async () => {
    await clearOfWindowEdge(300);
    const replies: Reply[] = [];
    for (let i = 0; i < 31; i++) replies.push(await call(server, 'GET', '/api/webauthn/login/options', undefined, from(inSlash64('2001:db8:20:1', i))));
    assert.deepEqual(statuses(replies), [...times(30, 200), 429]);
    const verify = await call(server, 'POST', '/api/webauthn/login/verify', { challenge: 'x'.repeat(43), assertion: {} }, from('2001:db8:20:1::abcd'));
    assert.equal(verify.status, 429, 'the verification step counts under the same key');
  });

  it('mailed-link pages and confirmations from one /64 stop at 30 per 10 minutes, across link kinds', async () => {
    await clearOfWindowEdge(600);
    const token = 'A'.repeat(43); // shaped like a link token, matching none
    const replies: Reply[] = [];
    for (let i = 0; i < 30; i++) replies.push(await call(server, 'GET', `/api/email/verify?token=${token}`, undefined, { ...from(inSlash64('2001:db8:30:1', i)), accept: 'application/json' }));
    assert.deepEqual(statuses(replies), times(30, 400));
    assert.equal((await call(server, 'POST', '/api/email/verify', { token }, from('2001:db8:30:1:ffff::1'))).status, 429);
    assert.equal((await call(server, 'POST', '/api/passkeys/undo', { token }, from('2001:db8:30:1::2'))).status, 429, 'the undo link counts too');
    assert.equal((await call(server, 'POST', '/api/email/verify', { token }, from('2001:db8:30:2::1'))).status, 400, 'another /64');
  });
});
