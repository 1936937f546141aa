import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { startSmtpStandIn, type SmtpStandIn } from './helpers/stand-ins/smtp.ts';
import { FixedClock } from '../src/clock.ts';
import { sha256Hex } from '../src/crypto/random.ts';
import { FORGOT_ANSWER, FORGOT_PER_ACCOUNT, FORGOT_PER_CLIENT, RESET_PATH } from '../src/domain/accounts/password-reset.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { accessRequest, addPasskey, approve, respond, withPasskeySession } from './helpers/approvals.ts';
import { createAgent } from './helpers/agents.ts';
import { lastLinkToken, mailsOf, verifyEmail } from './helpers/email-links.ts';

// Forgotten password (issue 23, item 4), in process on both stores: the same answer whatever the
// account, a link only to a verified address, the page behind it, the reset (single-use, 1 hour,
// newest link only, racing callers), what it ends and keeps, and the bounds on asking and guessing.

const HOUR = 3_600_000;
const FROM = 'Mandate Test <mailer@mandate.test>';
const NEW_PASSWORD = 'a brand new password';

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`forgotten password (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
    });
    after(() => t.close());

    const forgot = (email: string, from = remoteAddress()) => t.app.inject({ method: 'POST', url: '/api/password/forgot', remoteAddress: from, payload: { email } });
    const reset = (token: string, password = NEW_PASSWORD) => t.app.inject({ method: 'POST', url: RESET_PATH, remoteAddress: remoteAddress(), payload: { token, new_password: password } });
    const login = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: remoteAddress(), payload: { email, password } });
    const verifiedOwner = async () => {
      const owner = await signUp(t.app);
      await verifyEmail(t, owner);
      return owner;
    };
    /** Asks for a link and answers its token, once the off-path mailing is done. */
    const linkFor = async (owner: { email: string; user: { id: string } }) => {
      expectStatus(await forgot(owner.email), 200);
      await t.services.passwordReset.settled();
      return lastLinkToken(t, owner.user.id, 'password_reset', RESET_PATH);
    };

    it('answers the same for an unknown address, an unverified account and a verified one; only the verified one gets a link', async () => {
      const unverified = await signUp(t.app);
      const verified = await verifiedOwner();
      const answers = [await forgot(`nobody.${Date.now()}@example.com`), await forgot(unverified.email), await forgot(verified.email.toUpperCase())];
      for (const a of answers) {
        expectStatus(a, 200);
        assert.deepEqual(json(a), FORGOT_ANSWER);
        assert.equal(a.headers['content-type'], answers[0]?.headers['content-type']);
      }
      assert.equal(new Set(answers.map((a) => a.body)).size, 1, 'byte for byte the same body');
      await t.services.passwordReset.settled();
      assert.equal((await mailsOf(t, unverified.user.id, 'password_reset')).length, 0, 'an unverified address gets nothing');
      const [mail] = await mailsOf(t, verified.user.id, 'password_reset');
      assert.ok(mail);
      assert.equal(mail.to, verified.email);
      assert.equal(mail.subject, 'Choose a new password for Mandate');
      assert.match(mail.text, /60 minutes/);
    });

    it('answers before the account is even looked up: its time does not depend on the account', async () => {
      const verified = await verifiedOwner();
      const users = t.services.store.users;
      const byEmail = users.byEmail.bind(users);
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => { release = r; });
      let lookedUp = 0;
      users.byEmail = async (email) => { lookedUp++; await gate; return byEmail(email); };
      try {
        const answered = await forgot(verified.email);
        expectStatus(answered, 200);
        assert.deepEqual(json(answered), FORGOT_ANSWER, 'answered while the lookup is still waiting');
      } finally {
        release();
        users.byEmail = byEmail;
      }
      await t.services.passwordReset.settled();
      assert.equal(lookedUp, 1);
      assert.equal((await mailsOf(t, verified.user.id, 'password_reset')).length, 1, 'the link went out after the answer');
    });

    it('the link: stored hashed, its page shows the address and uses nothing, the reset sets the password, ends every session, keeps the passkeys, records and notifies', async () => {
      const owner = await verifiedOwner();
      await addPasskey(t, owner);
      const second = json<{ session_token: string }>(await login(owner.email, owner.password)).session_token;
      const token = await linkFor(owner);
      assert.equal(await t.services.store.emailTokens.peek(token, 'reset_password', t.clock.now()), undefined, 'the token is not a key of the table');
      const stored = await t.services.store.emailTokens.peek(sha256Hex(token), 'reset_password', t.clock.now());
      assert.equal(stored?.expiresAt, t.clock.now() + HOUR, 'valid 1 hour');

      for (let i = 0; i < 2; i++) {
        const page = await t.app.inject({ url: `${RESET_PATH}?token=${token}`, remoteAddress: remoteAddress(), headers: { accept: 'text/html' } });
        expectStatus(page, 200);
        assert.match(String(page.headers['content-type']), /^text\/html/);
        assert.equal(page.headers['cache-control'], 'no-store');
        assert.ok(page.body.includes(owner.email));
        assert.ok(page.body.includes(`<form method="post" action="${RESET_PATH}">`));
        assert.ok(page.body.includes('name="new_password" required minlength="8"'));
        assert.ok(page.body.includes('autocomplete="new-password"'));
      }
      const asJson = await t.app.inject({ url: `${RESET_PATH}?token=${token}`, remoteAddress: remoteAddress() });
      expectStatus(asJson, 200);

      const done = await reset(token);
      expectStatus(done, 200);
      assert.deepEqual(json(done), { password_reset: true, email: owner.email, signed_in: false, next_step: 'sign in with your email address and the new password' });
      assert.equal(done.headers['set-cookie'], undefined, 'nobody is signed in by the reset');

      expectStatus(await t.app.inject({ url: '/api/me', headers: owner.auth }), 401);
      expectStatus(await t.app.inject({ url: '/api/me', headers: { authorization: `Bearer ${second}` } }), 401);
      expectStatus(await login(owner.email, owner.password), 401);
      const signedIn = await login(owner.email, NEW_PASSWORD);
      expectStatus(signedIn, 200);
      const auth = { authorization: `Bearer ${json<{ session_token: string }>(signedIn).session_token}` };

      expectStatus(await t.app.inject({ url: '/api/me', headers: auth }), 200);
      assert.equal((await t.services.store.passkeys.listForUser(owner.user.id)).length, 1, 'the passkey stays');
      const activity = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 20, action: 'password.reset' });
      assert.equal(activity.length, 1);
      assert.equal(JSON.stringify(activity).includes(token), false);
      const inbox = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 20, since: 0 });
      assert.ok(inbox.some((n) => n.type === 'security' && n.title === 'Password changed'), 'a security notice');

      const again = await reset(token, 'yet another password');
      expectStatus(again, 400);
      assert.match(json<{ detail: string }>(again).detail, /not valid/);
      expectStatus(await login(owner.email, NEW_PASSWORD), 200);
      const page = await t.app.inject({ url: `${RESET_PATH}?token=${token}`, remoteAddress: remoteAddress(), headers: { accept: 'text/html' } });
      expectStatus(page, 400);
      assert.ok(page.body.includes('Forgot your password?'), 'the used link\'s page says what to do');
    });

    it('the page\'s form post sets the password and answers with a page', async () => {
      const owner = await verifiedOwner();
      const token = await linkFor(owner);
      const res = await t.app.inject({
        method: 'POST', url: RESET_PATH, remoteAddress: remoteAddress(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        payload: new URLSearchParams({ token, new_password: NEW_PASSWORD }).toString(),
      });
      expectStatus(res, 200);
      assert.ok(res.body.includes('Password changed'));
      expectStatus(await login(owner.email, NEW_PASSWORD), 200);
    });

    it('after a reset the passkey still signs in and approves; the new password alone cannot approve', async () => {
      const owner = await verifiedOwner();
      const authenticator = await addPasskey(t, owner);
      const agent = await createAgent(t, owner, 'Shopper');
      expectStatus(await reset(await linkFor(owner)), 200);
      await withPasskeySession(t, { ...owner, authenticator });
      const signedIn = await login(owner.email, NEW_PASSWORD);
      expectStatus(signedIn, 200);
      const withPassword = { ...owner, authenticator, auth: { authorization: `Bearer ${json<{ session_token: string }>(signedIn).session_token}` } };
      const txnId = await accessRequest(t, agent);
      const bare = await respond(t, withPassword, txnId, { approve: true });
      assert.ok(bare.statusCode >= 400 && bare.statusCode < 500, `approving without a passkey: ${bare.statusCode}`);
      expectStatus(await approve(t, withPassword, txnId), 200);
    });

    it('expires after 1 hour', async () => {
      const owner = await verifiedOwner();
      const token = await linkFor(owner);
      t.clock.advance(HOUR + 1000);
      expectStatus(await reset(token), 400);
      expectStatus(await login(owner.email, owner.password), 200);
    });

    it('a newer request voids the older link', async () => {
      const owner = await verifiedOwner();
      const older = await linkFor(owner);
      const newer = await linkFor(owner);
      assert.notEqual(older, newer);
      expectStatus(await reset(older), 400);
      expectStatus(await reset(newer), 200);
    });

    it('a link ends when the account\'s address changes', async () => {
      const owner = await verifiedOwner();
      const token = await linkFor(owner);
      const changed = await t.app.inject({ method: 'PATCH', url: '/api/me', headers: owner.auth, payload: { email: `moved.${Date.now()}@example.com`, current_password: owner.password } });
      expectStatus(changed, 200);
      expectStatus(await reset(token), 400);
    });

    it('of racing resets with one link exactly one wins', async () => {
      const owner = await verifiedOwner();
      const token = await linkFor(owner);
      const passwords = Array.from({ length: 6 }, (_, i) => `racing password ${i}`);
      const answers = await Promise.all(passwords.map((p) => reset(token, p)));
      const won = answers.map((a, i) => (a.statusCode === 200 ? i : -1)).filter((i) => i >= 0);
      assert.equal(won.length, 1, answers.map((a) => a.statusCode).join(','));
      for (const a of answers) assert.ok([200, 400].includes(a.statusCode));
      const winner = passwords[won[0] ?? -1] ?? '';
      expectStatus(await login(owner.email, winner), 200);
      for (const p of passwords.filter((x) => x !== winner)) expectStatus(await login(owner.email, p), 401);
    });

    it('refuses bad tokens and short passwords with a clear 4xx, never a 5xx', async () => {
      const owner = await verifiedOwner();
      const token = await linkFor(owner);
      for (const bad of ['', 'x', 'A'.repeat(43), `${token}x`, token.slice(1)]) {
        const res = await t.app.inject({ method: 'POST', url: RESET_PATH, remoteAddress: remoteAddress(), payload: { token: bad, new_password: NEW_PASSWORD } });
        assert.ok([400, 422].includes(res.statusCode), `${bad}: ${res.statusCode}`);
        assert.ok(json<{ detail: string }>(res).detail);
      }
      const short = await reset(token, 'short');
      expectStatus(short, 422);
      assert.match(short.body, /new_password/);
      assert.match(short.body, /fewer than 8 characters/);
      expectStatus(await reset(token), 200);
    });

    it('bounds requests per address asked about (known or not) and per client, with the same 429', async () => {
      const owner = await verifiedOwner();
      const unknown = `nobody.bound.${Date.now()}@example.com`;
      for (const email of [owner.email, unknown]) {
        for (let i = 0; i < FORGOT_PER_ACCOUNT.limit; i++) expectStatus(await forgot(email), 200);
        const refused = await forgot(email);
        expectStatus(refused, 429);
        assert.ok(json<{ retry_after: number }>(refused).retry_after > 0);
      }
      await t.services.passwordReset.settled();
      assert.equal((await mailsOf(t, owner.user.id, 'password_reset')).length, FORGOT_PER_ACCOUNT.limit, 'at most that many mails reach the inbox');

      const client = remoteAddress();
      for (let i = 0; i < FORGOT_PER_CLIENT.perAddress; i++) expectStatus(await forgot(`walk${i}.${Date.now()}@example.com`, client), 200);
      const walked = await forgot(`walk.more.${Date.now()}@example.com`, client);
      expectStatus(walked, 429);
      assert.ok(json<{ retry_after: number }>(walked).retry_after > 0);
      t.clock.advance(HOUR);
      expectStatus(await forgot(`walk.later.${Date.now()}@example.com`, client), 200);
    });

    it('bounds guesses of links per client address', async () => {
      const client = remoteAddress();
      let status = 0;
      for (let i = 0; i < 40 && status !== 429; i++) {
        const res = await t.app.inject({ method: 'POST', url: RESET_PATH, remoteAddress: client, payload: { token: 'B'.repeat(43), new_password: NEW_PASSWORD } });
        status = res.statusCode;
        if (status !== 429) expectStatus(res, 400);
      }
      assert.equal(status, 429, 'guessing is cut off');
    });
  });
}

describe('forgotten password over SMTP, logs at trace level', () => {
  let smtp: SmtpStandIn;
  before(async () => {
    smtp = await startSmtpStandIn({ from: FROM });
    smtp.expectBaseUrl('http://localhost:8080');
  });
  after(() => smtp.close());

  it('the link arrives by SMTP; neither its token nor the new password ever reaches the log', async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const dir = mkdtempSync(join(tmpdir(), 'mandate-reset-logs-'));
    const store = await openSqliteStore(dir);
    const { app, services } = await buildApp({ config: parseConfig({ DATA_DIR: dir, LOG_LEVEL: 'trace', SMTP_URL: smtp.url, MAIL_FROM: FROM, BASE_URL: 'http://localhost:8080' }), store, logStream });
    const newPassword = 'pw-new-after-reset-5f4e3d';
    const secrets: string[] = [newPassword];
    try {
      const email = `reset-logs-${randomBytes(4).toString('hex')}@example.com`;
      const auth = { authorization: `Bearer ${(await app.inject({ method: 'POST', url: '/api/users', payload: { email, password: 'pw-before-reset-1234' } })).json().session_token as string}` };
      await app.inject({ method: 'POST', url: '/api/email/send', headers: auth, payload: {} });
      await services.outbox.drain();
      const verify = new URL((await smtp.mailTo(email)).links.find((l) => l.includes('/api/email/verify')) ?? 'x:').searchParams.get('token') ?? '';
      assert.equal((await app.inject({ method: 'POST', url: '/api/email/verify', payload: { token: verify } })).statusCode, 200);

      assert.equal((await app.inject({ method: 'POST', url: '/api/password/forgot', payload: { email } })).statusCode, 200);
      await services.passwordReset.settled();
      await services.outbox.drain();
      const mail = await smtp.mailTo(email, { index: 1 });
      assert.equal(mail.subject, 'Choose a new password for Mandate');
      const token = new URL(mail.links.find((l) => l.includes(RESET_PATH)) ?? 'x:').searchParams.get('token') ?? '';
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      secrets.push(token);
      await app.inject({ url: `${RESET_PATH}?token=${token}`, headers: { accept: 'text/html' } });
      const done = await app.inject({ method: 'POST', url: RESET_PATH, headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${token}&new_password=${newPassword}` });
      assert.equal(done.statusCode, 200);
      await app.inject({ method: 'POST', url: RESET_PATH, payload: { token, new_password: newPassword } });
      assert.equal((await app.inject({ method: 'POST', url: '/api/login', payload: { email, password: newPassword } })).statusCode, 200);
      await services.outbox.drain();
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(smtp.problems, []);
    const log = lines.join('');
    assert.match(log, /\[redacted\]/, 'the token of the page view is redacted from the request log');
    for (const secret of secrets) assert.equal(log.includes(secret), false, `a secret reached the log: ${secret.slice(0, 8)}...`);
  });
});
