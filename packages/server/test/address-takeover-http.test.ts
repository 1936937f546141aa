import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';
import { call, expectStatus } from './helpers/over-http.ts';
import { linkInLog } from './helpers/email-over-http.ts';

// Attack test (issue 22, hardening), against the real server as its own process, on both stores:
// a stranger signs up first with the address named in ADMIN_EMAILS. Before the fix the admin's own
// sign-up was 409 for ever. Now the admin's sign-up is pending, the link mailed to the address (the
// service runs without SMTP_URL, so the mail is in its log, where the test reads it as the admin
// reads their mail) takes the address, and the admin signs in as admin; the squatter keeps nothing.

const CLAIM_LINK = /https?:\/\/[^\s"'<>\\]+\/api\/email\/claim\?token=[A-Za-z0-9_-]+/;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`a squatter cannot keep the admin's address, over HTTP (${backend})`, { timeout: 180_000 }, () => {
    let server: ServerProcess;
    let db: Awaited<ReturnType<typeof freshPostgresDatabase>> | undefined;
    const admin = `admin.${backend}.${Date.now()}@example.com`;

    before(async () => {
      db = backend === 'postgres' ? await freshPostgresDatabase() : undefined;
      server = await startServer({ name: `address take-over (${backend})`, env: { ADMIN_EMAILS: admin, ...(db ? { DATABASE_URL: db.url } : {}) }, healthyWithinMs: 90_000 });
    });
    after(async () => {
      await server?.stop();
      await db?.drop();
    });

    it('the admin takes the address and the admin role from the squatter, who keeps nothing of it', async () => {
      const squatted = await call<{ session_token: string }>(server, 'POST', '/api/users', { email: admin, password: 'squatter password' });
      expectStatus(squatted, 200, 'the squatter signs up first');
      const squatter = { authorization: `Bearer ${squatted.body.session_token}` };
      assert.equal((await call<{ role: string }>(server, 'GET', '/api/me', undefined, squatter)).body.role, 'user');

      const since = server.logs().length;
      const pending = await call<{ pending: boolean; detail: string; next_step: string }>(server, 'POST', '/api/users', { email: admin.toUpperCase(), password: 'the admin password' });
      expectStatus(pending, 202, 'the admin signs up: pending, not 409');
      assert.equal(pending.body.pending, true);
      assert.match(pending.body.next_step, new RegExp(`open the link mailed to ${admin.replace(/\./g, '\\.')}`));

      const link = new URL(await linkInLog(server, since, CLAIM_LINK, `the take-over link for ${admin}`));
      assert.ok(server.logs().slice(since).includes(admin), 'mailed to the address');
      expectStatus(await call(server, 'GET', `${link.pathname}${link.search}`), 200, 'the page behind the link');
      const token = link.searchParams.get('token');
      expectStatus(await call(server, 'POST', '/api/email/claim', { token, password: 'squatter password' }), 403, 'whoever reads the mail needs the sign-up\'s password too');
      expectStatus(await call(server, 'POST', '/api/email/claim', { token, password: 'the admin password' }), 200, 'the admin confirms from the mail');

      const signedIn = await call<{ session_token: string }>(server, 'POST', '/api/login', { email: admin, password: 'the admin password' });
      expectStatus(signedIn, 200, 'the admin signs in with the address');
      const adminMe = await call<{ role: string; email: string; email_verified: boolean }>(server, 'GET', '/api/me', undefined, { authorization: `Bearer ${signedIn.body.session_token}` });
      assert.deepEqual([adminMe.body.role, adminMe.body.email, adminMe.body.email_verified], ['admin', admin, true]);

      expectStatus(await call(server, 'GET', '/api/me', undefined, squatter), 401, 'the squatter\'s sessions ended');
      expectStatus(await call(server, 'POST', '/api/login', { email: admin, password: 'squatter password' }), 401, 'the squatter cannot sign in with the address');
      expectStatus(await call(server, 'POST', '/api/users', { email: admin, password: 'squatter again' }), 409, 'nor take it back: the admin verified it');
    });
  });
}
