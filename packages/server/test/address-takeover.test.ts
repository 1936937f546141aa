import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KeyEncryption } from '../src/crypto/key-encryption.ts';
import { openMail } from '../src/domain/mail/mailer.ts';
import { CLAIM_CONFIRMS_PER_LINK, CLAIM_MAIL_LIMIT, CLAIM_PATH, RELEASED_DOMAIN } from '../src/domain/accounts/address-takeover.ts';
import { expectStatus, json, remoteAddress, signUp, type TestApp, testApp } from './helpers/app.ts';
import { verifyEmail } from './helpers/email-links.ts';

// Attack test (issue 22, hardening): anyone could sign up first with an address named in
// ADMIN_EMAILS and block the admin's own sign-up (409 for ever: only the admin can verify it, and
// the address was taken). Now the verified holder takes the address from the unverified squatter
// (address-takeover.ts). In-process on both stores; over real HTTP: address-takeover-http.test.ts.

const ADMIN = 'admin@takeover.example';

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`address take-over (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { ADMIN_EMAILS: `sqlite.${ADMIN},postgres.${ADMIN}` } });
    });
    after(() => t.close());

    const signUpRaw = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/api/users', remoteAddress: remoteAddress(), payload: { email, password } });
    const logIn = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: remoteAddress(), payload: { email, password } });
    const me = (auth: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/me', headers: auth });
    const confirm = (token: string, password: string) => t.app.inject({ method: 'POST', url: CLAIM_PATH, remoteAddress: remoteAddress(), payload: { token, password } });
    /** The tokens of the take-over links mailed to `to`, oldest first. */
    const claimTokens = async (to: string): Promise<string[]> => {
      const keys = t.config.keyEncryptionKey ? new KeyEncryption(t.config.keyEncryptionKey) : null;
      const rows = (await t.services.store.outbox.list({ kind: 'email_claim', limit: 1000 })).sort((a, b) => a.id - b.id);
      const out: string[] = [];
      for (const row of rows) {
        assert.equal(row.userId, null, 'a take-over mail belongs to no account');
        const mail = openMail(row.payload, keys);
        if ('error' in mail || mail.to !== to) continue;
        const link = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] ?? 'x:');
        assert.equal(link.pathname, CLAIM_PATH);
        out.push(link.searchParams.get('token') ?? '');
      }
      return out;
    };

    it('the squatter no longer blocks the admin: the admin takes the address and the admin role; the squatter keeps nothing tied to it', async () => {
      const admin = `${backend}.${ADMIN}`; // one ADMIN_EMAILS address per store run (the database may be shared)
      const squatter = await signUp(t.app, admin, 'squatter password');
      assert.equal(json<{ role: string }>(await me(squatter.auth)).role, 'user', 'unverified: no admin role, as before');

      // Before the fix: 409 "an account with this email already exists", for ever.
      const res = await signUpRaw(admin, 'the real admin password');
      expectStatus(res, 202);
      const pending = json<{ pending: boolean; email: string; expires_in: number; detail: string; next_step: string }>(res);
      assert.equal(pending.pending, true);
      assert.equal(pending.email, admin);
      assert.equal(pending.expires_in, 86_400);
      assert.match(pending.detail, /never verified/);
      assert.match(pending.next_step, /open the link mailed to/);
      assert.equal(res.headers['set-cookie'], undefined, 'no session before the address is proven');
      assert.equal((await logIn(admin, 'the real admin password')).statusCode, 401, 'no account yet');

      const [token] = await claimTokens(admin);
      assert.ok(token);
      const page = await t.app.inject({ method: 'GET', url: `${CLAIM_PATH}?token=${token}`, headers: { accept: 'text/html' } });
      expectStatus(page, 200);
      assert.match(page.body, /Confirm/);
      assert.match(page.body, /type="password" name="password"/);
      // Reading the mail is not enough: the sign-up's password too (else whoever signed up could get
      // a verified account with the address of someone who clicks the link by mistake).
      const wrong = await confirm(token, 'squatter password');
      expectStatus(wrong, 403);
      assert.match(json<{ detail: string; next_step: string }>(wrong).next_step, /if you did not sign up, ignore the mail/);
      const claimed = await confirm(token, 'the real admin password');
      expectStatus(claimed, 200);
      assert.deepEqual(json(claimed), { email_verified: true, email: admin, account_created: true, next_step: 'sign in with this address and the password you chose at sign-up' });
      expectStatus(await confirm(token, 'the real admin password'), 400);

      const signedIn = await logIn(admin, 'the real admin password');
      expectStatus(signedIn, 200);
      const adminMe = await me({ authorization: `Bearer ${json<{ session_token: string }>(signedIn).session_token}` });
      const adminUser = json<{ id: string; role: string; email_verified: boolean }>(adminMe);
      assert.equal(adminUser.role, 'admin');
      assert.equal(adminUser.email_verified, true);
      assert.notEqual(adminUser.id, squatter.user.id, 'the admin does not inherit the squatter\'s account');

      // The squatter: sessions ended, the address gone (a placeholder nobody can sign in with), no admin.
      expectStatus(await me(squatter.auth), 401);
      expectStatus(await logIn(admin, 'squatter password'), 401);
      const left = await t.services.store.users.byId(squatter.user.id);
      assert.ok(left?.email.endsWith(`@${RELEASED_DOMAIN}`), left?.email);
      assert.equal(left?.emailVerified, false);
      assert.equal(t.services.accounts.role(left), 'user');
      const trail = await t.services.store.activity.list(squatter.user.id, { before: 0, limit: 50 });
      const taken = trail.find((a) => a.action === 'email.taken_over');
      assert.deepEqual(taken?.detail, { email: admin });
      assert.equal(taken?.ip, null, 'the squatter does not learn the holder\'s client address');
    });

    it('an address its holder has verified stays refused: 409 with next_step, and nothing is mailed', async () => {
      const holder = await signUp(t.app);
      await verifyEmail(t, holder);
      const res = await signUpRaw(holder.email, 'another password');
      expectStatus(res, 409);
      assert.match(json<{ detail: string }>(res).detail, /has verified it; sign in instead/);
      assert.ok(json<{ next_step?: string }>(res).next_step);
      assert.deepEqual(await claimTokens(holder.email), []);
    });

    it('an account cannot move onto an address held unverified: 409 saying to sign up with it instead', async () => {
      const squatter = await signUp(t.app);
      const mover = await signUp(t.app);
      const res = await t.app.inject({ method: 'PATCH', url: '/api/me', headers: mover.auth, payload: { email: squatter.email, current_password: mover.password } });
      expectStatus(res, 409);
      assert.match(json<{ detail: string }>(res).detail, /never verified it/);
      assert.match(json<{ next_step: string }>(res).next_step, /sign up with it/);
      assert.equal((await t.services.store.users.byEmail(squatter.email))?.id, squatter.user.id, 'nothing moved');
    });

    it('of two claims racing for one address exactly one makes its account; the loser gets 409 and its link stays unused', async () => {
      const squatter = await signUp(t.app);
      expectStatus(await signUpRaw(squatter.email, 'first claimant pw'), 202);
      expectStatus(await signUpRaw(squatter.email, 'second claimant pw'), 202);
      const tokens = await claimTokens(squatter.email);
      assert.equal(tokens.length, 2);
      const passwords = ['first claimant pw', 'second claimant pw'];
      const answers = await Promise.all(tokens.map((tok, i) => confirm(tok, passwords[i]!)));
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 409], answers.map((a) => a.body).join('\n'));
      assert.match(json<{ detail: string }>(answers.find((a) => a.statusCode === 409) ?? answers[0]!).detail, /verified this address first/);
      const winner = answers.findIndex((a) => a.statusCode === 200);
      expectStatus(await logIn(squatter.email, passwords[winner]!), 200);
      expectStatus(await logIn(squatter.email, passwords[1 - winner]!), 401);
      // The loser's link was rolled back, not used up: it still answers 409, never 400.
      expectStatus(await confirm(tokens[1 - winner]!, passwords[1 - winner]!), 409);
    });

    it('bad links are 400 with what to do; take-over mails to one address are limited', async () => {
      for (const token of ['', 'short', 'A'.repeat(43)]) {
        const res = await confirm(token || 'x', 'any password');
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, /Sign up again/);
      }
      const page = await t.app.inject({ method: 'GET', url: `${CLAIM_PATH}?token=${'B'.repeat(43)}`, headers: { accept: 'text/html' } });
      expectStatus(page, 400);
      const squatter = await signUp(t.app);
      for (let i = 0; i < CLAIM_MAIL_LIMIT.perAddress; i++) expectStatus(await signUpRaw(squatter.email, `claimant ${i} password`), 202);
      expectStatus(await signUpRaw(squatter.email, 'one too many'), 429);
      const tokens = await claimTokens(squatter.email);
      assert.equal(tokens.length, CLAIM_MAIL_LIMIT.perAddress);
      // Guessing the sign-up's password with the link: CLAIM_CONFIRMS_PER_LINK tries, then 429, the right one too.
      for (let i = 0; i < CLAIM_CONFIRMS_PER_LINK; i++) expectStatus(await confirm(tokens[0]!, `guess ${i}`), 403);
      expectStatus(await confirm(tokens[0]!, 'claimant 0 password'), 429);
    });
  });
}
