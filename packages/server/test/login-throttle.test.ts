import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, json, signUp, type TestApp, testApp } from './helpers/app.ts';

// Password sign-in throttling (decisions §25) on the fixed clock, on both stores (the counters live
// there). The same rules over real HTTP, with client addresses from X-Forwarded-For:
// login-throttle-http.test.ts.

const WINDOW_SEC = 900;
const PER_ACCOUNT = 10;
const PER_ADDRESS = 50;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`password sign-in throttle (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { LOGIN_MAX_PER_ACCOUNT: String(PER_ACCOUNT), LOGIN_MAX_PER_ADDRESS: String(PER_ADDRESS), LOGIN_WINDOW_SECONDS: String(WINDOW_SEC) } });
    });
    after(() => t.close());

    let addr = 0;
    /** A client address no test has used. */
    const freshAddress = (): string => `198.51.100.${++addr}`;
    const logIn = (email: string, password: string, remoteAddress: string): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'POST', url: '/api/login', remoteAddress, payload: { email, password } });
    /** Moves the clock to the start of the next throttle window (windows are aligned to the epoch). */
    const nextWindow = (): void => {
      const ms = WINDOW_SEC * 1000;
      t.clock.set(t.clock.now() - (t.clock.now() % ms) + ms);
    };
    const retryAfter = (res: LightMyRequestResponse): number => {
      expectStatus(res, 429);
      const body = json<{ detail: string; retry_after: number }>(res);
      assert.equal(body.detail, 'rate limit exceeded');
      assert.equal(res.headers['retry-after'], String(body.retry_after));
      return body.retry_after;
    };

    it('ten wrong guesses do not lock the owner out: another address signs in; the guessing address stays refused', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const attacker = freshAddress();
      for (let i = 0; i < PER_ACCOUNT; i++) expectStatus(await logIn(owner.email, `guess-${i}`, attacker), 401);
      const wait = retryAfter(await logIn(owner.email, 'guess-x', attacker));
      assert.ok(wait > 0 && wait <= WINDOW_SEC, String(wait));
      // Even the right password from the guessing address waits: it cannot tell a hit from a miss.
      retryAfter(await logIn(owner.email, owner.password, attacker));
      // The owner, at home, has no failure at the account: signs in, and again.
      const home = freshAddress();
      expectStatus(await logIn(owner.email, owner.password, home), 200);
      expectStatus(await logIn(owner.email, owner.password, home), 200);
      retryAfter(await logIn(owner.email, 'guess-y', attacker));
    });

    it('while the account is over its limit, every other address gets one guess per window', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const first = freshAddress();
      for (let i = 0; i < PER_ACCOUNT; i++) expectStatus(await logIn(owner.email, `guess-${i}`, first), 401);
      const others = Array.from({ length: 20 }, freshAddress);
      for (const a of others) expectStatus(await logIn(owner.email, 'one-guess', a), 401);
      for (const a of others) retryAfter(await logIn(owner.email, 'second-guess', a));
      // The next window: the counts start over, each address may guess again.
      nextWindow();
      expectStatus(await logIn(owner.email, 'new-window-guess', first), 401);
      expectStatus(await logIn(owner.email, 'new-window-guess', others[0] as string), 401);
    });

    it('concurrent guesses from one address at an account over its limit: exactly one gets through', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const first = freshAddress();
      for (let i = 0; i < PER_ACCOUNT; i++) expectStatus(await logIn(owner.email, `guess-${i}`, first), 401);
      const burst = freshAddress();
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => logIn(owner.email, `burst-${i}`, burst)));
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [401, ...Array<number>(19).fill(429)]);
    });

    it('a burst from one address at a fresh account passes the account limit by at most one', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const burst = freshAddress();
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => logIn(owner.email, `burst-${i}`, burst)));
      const through = answers.filter((r) => r.statusCode === 401).length;
      assert.ok(through >= PER_ACCOUNT && through <= PER_ACCOUNT + 1, `${through} guesses got through`);
      assert.equal(answers.filter((r) => r.statusCode !== 401 && r.statusCode !== 429).length, 0);
    });

    it('the owner who mistyped earlier still signs in from home once the account comes under attack (a success clears the pair)', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const home = freshAddress();
      expectStatus(await logIn(owner.email, 'typo-1', home), 401);
      expectStatus(await logIn(owner.email, 'typo-2', home), 401);
      expectStatus(await logIn(owner.email, owner.password, home), 200);
      const attacker = freshAddress();
      for (let i = 0; i < PER_ACCOUNT; i++) await logIn(owner.email, `guess-${i}`, attacker);
      retryAfter(await logIn(owner.email, 'guess-x', attacker));
      expectStatus(await logIn(owner.email, owner.password, home), 200);
    });

    it('successful sign-ins do not count: one address signs in more times than the account limit', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const office = freshAddress();
      for (let i = 0; i < PER_ACCOUNT + 5; i++) expectStatus(await logIn(owner.email, owner.password, office), 200);
      // The account still has its whole allowance of failures at other addresses.
      const elsewhere = freshAddress();
      for (let i = 0; i < PER_ACCOUNT; i++) expectStatus(await logIn(owner.email, `typo-${i}`, elsewhere), 401);
      retryAfter(await logIn(owner.email, 'typo-x', elsewhere));
    });

    it(`one address guessing at many accounts is stopped after ${PER_ADDRESS} failures, until the window ends`, async () => {
      nextWindow();
      const sprayer = freshAddress();
      for (let i = 0; i < PER_ADDRESS; i++) expectStatus(await logIn(`victim${i}.${backend}@example.com`, 'Summer2026!', sprayer), 401);
      const owner = await signUp(t.app);
      // Refused before any work, whatever the account, even with the right password.
      const wait = retryAfter(await logIn(owner.email, owner.password, sprayer));
      assert.ok(wait > 0 && wait <= WINDOW_SEC);
      expectStatus(await logIn(owner.email, owner.password, freshAddress()), 200);
      t.clock.advance(wait * 1000);
      expectStatus(await logIn(owner.email, owner.password, sprayer), 200);
    });

    it('an unknown email and a wrong password answer the same, at every step', async () => {
      nextWindow();
      const owner = await signUp(t.app);
      const ghost = `ghost.${backend}.${Date.now()}@example.com`;
      const [a, b] = [freshAddress(), freshAddress()];
      for (let i = 0; i <= PER_ACCOUNT + 1; i++) {
        const known = await logIn(owner.email, `guess-${i}`, a);
        const unknown = await logIn(ghost, `guess-${i}`, b);
        assert.equal(unknown.statusCode, known.statusCode, `attempt ${i + 1}`);
        assert.deepEqual(json(unknown), json(known), `attempt ${i + 1}`);
      }
    });
  });
}
