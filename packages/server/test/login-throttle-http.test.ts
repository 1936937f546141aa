import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';
import { call } from './helpers/over-http.ts';

// Attack test (issue 14, item 5): anyone who knows an owner's email used to block their password
// sign-in with ten wrong guesses. The real server, as its own process, on both stores; it sits
// behind "one proxy" (TRUST_PROXY=1), so the test presents client addresses in X-Forwarded-For.
// Window resets are covered on the fixed clock in login-throttle.test.ts.

const PER_ACCOUNT = 10;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`password guessing cannot lock the owner out, over HTTP (${backend})`, { timeout: 180_000 }, () => {
    let server: ServerProcess;
    let db: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
    const owner = { email: `owner.${backend}.${Date.now()}@example.com`, password: 'correct horse battery staple' };
    const logIn = (password: string, clientAddress: string) =>
      call(server, 'POST', '/api/login', { email: owner.email, password }, { 'x-forwarded-for': clientAddress });

    before(async () => {
      db = backend === 'postgres' ? await freshPostgresDatabase() : undefined;
      server = await startServer({
        name: `login throttle (${backend})`,
        env: { TRUST_PROXY: '1', LOGIN_MAX_PER_ACCOUNT: String(PER_ACCOUNT), ...(db ? { DATABASE_URL: db.url } : {}) },
        healthyWithinMs: 90_000,
      });
      const res = await call(server, 'POST', '/api/users', owner, { 'x-forwarded-for': '192.0.2.200' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    });
    after(async () => {
      await server?.stop();
      await db?.drop();
    });

    it('after 12 wrong guesses from one address the owner still signs in from home; the guessing address stays refused', async () => {
      const attacker = '203.0.113.66';
      const answers: number[] = [];
      for (let i = 0; i < PER_ACCOUNT + 2; i++) answers.push((await logIn(`guess-${i}`, attacker)).status);
      assert.deepEqual(answers, [...Array<number>(PER_ACCOUNT).fill(401), 429, 429]);

      const home = await logIn(owner.password, '198.51.100.7');
      assert.equal(home.status, 200, JSON.stringify(home.body));
      assert.equal(typeof (home.body as { session_token?: unknown }).session_token, 'string');

      const again = await logIn(owner.password, attacker);
      assert.equal(again.status, 429, 'the guessing address cannot tell the right password from a wrong one');
      assert.ok(Number(again.headers.get('retry-after')) > 0);
      assert.equal((again.body as { retry_after?: number }).retry_after, Number(again.headers.get('retry-after')));
    });

    it('guessing from many addresses gets one guess per address while the account is over its limit', async () => {
      const addresses = Array.from({ length: 15 }, (_, i) => `203.0.113.${100 + i}`);
      for (const a of addresses) assert.equal((await logIn('spray-1', a)).status, 401, a);
      for (const a of addresses) assert.equal((await logIn('spray-2', a)).status, 429, a);
      assert.equal((await logIn(owner.password, '198.51.100.8')).status, 200, 'the owner, from an address with no failure');
    });
  });
}
