import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant } from './helpers/agents.ts';
import { addPasskey, grantAccess, postAccessRequest, withPasskeySession, type Owner } from './helpers/approvals.ts';
import { getPass } from './helpers/passes.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { lastLinkToken, mailsOf, verifyEmail } from './helpers/email-links.ts';
import { startSmtpStandIn, type ReceivedMail, type SmtpStandIn } from './helpers/stand-ins/smtp.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';
import { call, expectStatus as expectReply, remoteAccessRequest, remoteAgent, remoteGrant, type RemoteOwner } from './helpers/over-http.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';
import { until } from './helpers/until.ts';

// Email verification and what depends on it (decisions §25; issue 14, items 3 and 7): the link,
// its page and its confirmation; the address gating user:email, the OIDC email claim and the admin
// role; a change of address starting over; the first passkey's notice and undo link. In process on
// both stores, then over real HTTP against the server as its own process with a stand-in SMTP relay
// (the attacks), then without SMTP_URL (the link in the log only), then the mail's way through the
// outbox (retried, sealed at rest, never in the log).

const DAY = 86_400_000;
const VERIFY = '/api/email/verify';
const UNDO = '/api/passkeys/undo';
const FROM = 'Mandate Test <mailer@mandate.test>';

const tokenOf = (link: string): string => new URL(link).searchParams.get('token') ?? '';
const linkIn = (mail: ReceivedMail, path: string): string => {
  const link = mail.links.find((l) => new URL(l).pathname === path);
  assert.ok(link, `no ${path} link in: ${mail.text}`);
  return link;
};

function inProcess(backend: 'sqlite' | 'postgres'): void {
  describe(`email verification in process (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { OUTBOX_POLL_MS: '600000', ADMIN_EMAILS: 'boss@example.com' }, clock: new FixedClock(Date.now()) });
    });
    after(() => t.close());

    const send = (owner: { auth: Record<string, string> }) => t.app.inject({ method: 'POST', url: '/api/email/send', headers: owner.auth, payload: {} });
    const page = (token: string, path = VERIFY) => t.app.inject({ url: `${path}?token=${encodeURIComponent(token)}`, remoteAddress: remoteAddress(), headers: { accept: 'text/html' } });
    const confirm = (token: unknown, path = VERIFY) => t.app.inject({ method: 'POST', url: path, remoteAddress: remoteAddress(), payload: { token } as Record<string, unknown> });
    const me = async (owner: { auth: Record<string, string> }) => json<{ email: string; email_verified: boolean; role: string }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    const newToken = async (owner: Owner | Awaited<ReturnType<typeof signUp>>) => {
      expectStatus(await send(owner), 200);
      return lastLinkToken(t, owner.user.id, 'email_verify', VERIFY);
    };

    it('send mails a single-use link for 24 h; its page shows the address and uses nothing; POST verifies once; /api/me says so; 409 once verified', async () => {
      const owner = await signUp(t.app);
      assert.equal((await me(owner)).email_verified, false);
      const sent = await send(owner);
      expectStatus(sent, 200);
      assert.deepEqual(json(sent), { sent: true, to: owner.email, expires_in: 86400 });
      const [mail] = await mailsOf(t, owner.user.id, 'email_verify');
      assert.ok(mail);
      assert.equal(mail.to, owner.email);
      assert.equal(mail.subject, 'Verify your email address for Mandate');
      const token = await lastLinkToken(t, owner.user.id, 'email_verify', VERIFY);
      assert.ok(mail.text.includes(`http://localhost:8080${VERIFY}?token=${token}`), 'the link is for BASE_URL');
      // Only the hash is stored.
      const stored = await t.services.store.emailTokens.peek(token, 'verify_email', t.clock.now());
      assert.equal(stored, undefined, 'the token itself is not a key of the table');

      for (let i = 0; i < 3; i++) {
        const shown = await page(token);
        expectStatus(shown, 200);
        assert.match(String(shown.headers['content-type']), /^text\/html/);
        assert.match(String(shown.headers['content-security-policy']), /script-src 'self'/);
        assert.equal(shown.headers['cache-control'], 'no-store');
        assert.ok(shown.body.includes(`Verify ${owner.email}`));
        assert.ok(shown.body.includes(`<form method="post" action="${VERIFY}">`));
        assert.ok(shown.body.includes('/assets/public.css'));
      }
      assert.equal((await me(owner)).email_verified, false, 'opening the page verified nothing (mail scanners open links)');

      const ok = await confirm(token);
      expectStatus(ok, 200);
      assert.deepEqual(json(ok), { email_verified: true, email: owner.email });
      assert.equal((await me(owner)).email_verified, true);
      const again = await confirm(token);
      expectStatus(again, 400);
      assert.match(json<{ detail: string }>(again).detail, /^this verification link is not valid: it was already used/);
      expectStatus(await page(token), 400);
      const conflict = await send(owner);
      expectStatus(conflict, 409);
      assert.equal(json<{ detail: string }>(conflict).detail, 'your email address is already verified');
      const trail = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'email.verified' });
      assert.equal(trail.length, 1);
    });

    it('a link expires after 24 hours: its page and its confirmation are refused', async () => {
      const owner = await signUp(t.app);
      const token = await newToken(owner);
      const start = t.clock.now();
      try {
        t.clock.set(start + DAY - 1);
        expectStatus(await page(token), 200);
        t.clock.set(start + DAY);
        const expired = await page(token);
        expectStatus(expired, 400);
        assert.ok(expired.body.includes('expired (links last 24 hours)'));
        assert.ok(expired.body.includes('send a new link from Account'));
        expectStatus(await confirm(token), 400);
        assert.equal((await me(owner)).email_verified, false);
      } finally {
        t.clock.set(start);
      }
    });

    it('of many confirmations of one link at once exactly one succeeds', async () => {
      const owner = await signUp(t.app);
      const token = await newToken(owner);
      const answers = await Promise.all(Array.from({ length: 10 }, () => confirm(token)));
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, ...Array(9).fill(400)]);
      assert.equal((await t.services.store.activity.list(owner.user.id, { before: 0, limit: 10, action: 'email.verified' })).length, 1);
    });

    it('changing the address starts over: password or passkey session needed, 409 if taken, unverified again, old links dead, the old verified address told', async () => {
      const owner = await signUp(t.app);
      const other = await signUp(t.app);
      await verifyEmail(t, owner);
      const patch = (auth: Record<string, string>, payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: '/api/me', headers: auth, payload });
      const moved = `moved-${randomBytes(4).toString('hex')}@example.com`;

      const missing = await patch(owner.auth, { email: moved });
      expectStatus(missing, 403);
      assert.equal(json<{ detail: string }>(missing).detail, 'changing your email address needs your current password');
      assert.match(json<{ next_step: string }>(missing).next_step, /current_password/);
      const wrong = await patch(owner.auth, { email: moved, current_password: 'not my password', display_name: 'Renamed' });
      expectStatus(wrong, 403);
      assert.match(json<{ next_step: string }>(wrong).next_step, /passkey/);
      const taken = await patch(owner.auth, { email: other.email.toUpperCase(), current_password: owner.password });
      expectStatus(taken, 409);
      expectStatus(await patch(owner.auth, { email: 'not-an-address', current_password: owner.password }), 422);
      const unchanged = await me(owner);
      assert.deepEqual([unchanged.email, unchanged.email_verified], [owner.email, true], 'refused changes change nothing, the name neither');
      assert.notEqual(json<{ display_name: string }>(await t.app.inject({ url: '/api/me', headers: owner.auth })).display_name, 'Renamed');

      // The same address again: nothing happens, no password needed.
      expectStatus(await patch(owner.auth, { email: owner.email }), 200);
      assert.equal((await me(owner)).email_verified, true);

      expectStatus(await send(other), 200);
      const stale = await lastLinkToken(t, other.user.id, 'email_verify', VERIFY);
      const otherMoved = `other-${randomBytes(4).toString('hex')}@example.com`;
      expectStatus(await patch(other.auth, { email: otherMoved, current_password: other.password }), 200);
      expectStatus(await confirm(stale), 400);
      assert.equal((await me(other)).email_verified, false, 'a link to the old address does not verify the new one');
      assert.equal((await mailsOf(t, other.user.id, 'email_changed')).length, 0, 'an unverified old address is not written to');

      const changed = await patch(owner.auth, { email: moved.toUpperCase(), current_password: owner.password });
      expectStatus(changed, 200);
      assert.deepEqual([json<{ email: string }>(changed).email, json<{ email_verified: boolean }>(changed).email_verified], [moved, false]);
      const [notice] = await mailsOf(t, owner.user.id, 'email_changed');
      assert.equal(notice?.to, owner.email, 'the old, verified address is told');
      assert.ok(notice?.text.includes(moved));
      assert.equal(await t.services.store.users.byEmail(owner.email), undefined);
      await verifyEmail(t, owner);
      assert.deepEqual([(await me(owner)).email, (await me(owner)).email_verified], [moved, true]);

      // A passkey session changes the address without the password.
      const withKey = await withPasskeySession(t, { ...owner, email: moved, authenticator: await addPasskey(t, owner) });
      const third = `third-${randomBytes(4).toString('hex')}@example.com`;
      expectStatus(await patch(withKey.auth, { email: third }), 200);
      assert.deepEqual([(await me(owner)).email, (await me(owner)).email_verified], [third, false]);
    });

    it('user:email is not offered, asked for or released while unverified (the impersonation of a site that links by email); once verified it is', async () => {
      // Someone signs up with another person's address, which they cannot verify.
      const impostor = await signUp(t.app, `victim-${randomBytes(4).toString('hex')}@example.com`);
      const agent = await createAgent(t, impostor, 'Impostor agent');
      const fields = async () => json<{ fields: { name: string }[] }>(await t.app.inject({ url: '/api/user-info/fields', headers: impostor.auth })).fields.map((f) => f.name);
      assert.deepEqual(await fields(), ['user:name']);
      const asked = await postAccessRequest(t, agent, { user_info: ['user:email'] });
      expectStatus(asked, 400);
      assert.match(json<{ detail: string; next_step: string }>(asked).detail, /^unknown user_info field: "user:email"/);
      // Even a grant that holds the field (made before a change of address) releases nothing for it.
      await createGrant(t, agent, { site: 'links-by-email.example', userInfo: ['user:name', 'user:email'] });
      const pass = decodeJwt((await getPass(t, agent, 'links-by-email.example')).access_token);
      assert.equal((pass.user_info as Record<string, string>)['user:email'], undefined);
      assert.deepEqual(Object.keys(pass.user_info as object), ['user:name']);

      // The real owner of an address verifies it: offered, approved and released.
      const owner = await signUp(t.app);
      await verifyEmail(t, owner);
      const key = new SoftAuthenticator();
      await addPasskey(t, owner, key);
      const theirs = await createAgent(t, owner, 'Shopper');
      await grantAccess(t, { ...owner, authenticator: key }, theirs, { user_info: ['user:email'] });
      const released = decodeJwt((await getPass(t, theirs)).access_token);
      assert.deepEqual(released.user_info, { 'user:email': owner.email });
    });

    it('an ADMIN_EMAILS address is no admin until its holder verifies it', async () => {
      const boss = await signUp(t.app, 'boss@example.com');
      assert.equal((await me(boss)).role, 'user');
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate', headers: boss.auth }), 403);
      await verifyEmail(t, boss);
      assert.equal((await me(boss)).role, 'admin');
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/admin/keys/rotate', headers: boss.auth }), 200);
    });

    it('at most 5 links per account per hour: then 429 with retry_after', async () => {
      const owner = await signUp(t.app);
      for (let i = 0; i < 5; i++) expectStatus(await send(owner), 200);
      const limited = await send(owner);
      expectStatus(limited, 429);
      assert.ok(json<{ retry_after: number }>(limited).retry_after > 0);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      // Each link is its own: the first still works.
      const first = (await mailsOf(t, owner.user.id, 'email_verify'))[0];
      expectStatus(await confirm(tokenOf(/https?:\/\/\S+/.exec(first?.text ?? '')?.[0] ?? 'x:')), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/email/send', payload: {} }), 401);
    });

    it('bad tokens of any shape get 4xx, never 5xx; the form posts of the pages get pages', async () => {
      for (const bad of ['', 'x', 'a'.repeat(43), '../../etc', '%00', 'é'.repeat(43)]) {
        const res = await confirm(bad);
        assert.ok(res.statusCode === 400 || res.statusCode === 422, `${bad}: ${res.statusCode}`);
        const undo = await confirm(bad, UNDO);
        assert.ok(undo.statusCode === 400 || undo.statusCode === 422, `${bad}: ${undo.statusCode}`);
      }
      for (const payload of [{}, { token: 7 }, { token: null }, { token: ['a'] }, { token: 'a'.repeat(201) }]) {
        expectStatus(await t.app.inject({ method: 'POST', url: VERIFY, payload: payload as Record<string, unknown> }), 422);
      }
      const browser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
      for (const path of [VERIFY, UNDO]) {
        const none = await t.app.inject({ url: path, headers: browser });
        expectStatus(none, 400);
        assert.match(String(none.headers['content-type']), /^text\/html/);
        // An API client gets the same refusal as JSON.
        const api = await t.app.inject({ url: `${path}?token=${'c'.repeat(43)}` });
        expectStatus(api, 400);
        assert.match(json<{ detail: string }>(api).detail, /link is not valid/);
        expectStatus(await t.app.inject({ url: `${path}?token=${'a'.repeat(300)}` }), 422);
        const form = await t.app.inject({ method: 'POST', url: path, headers: { ...browser, 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${'b'.repeat(43)}` });
        expectStatus(form, 400);
        assert.match(String(form.headers['content-type']), /^text\/html/);
        assert.ok(form.body.includes('This link does not work'));
        const formApi = await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${'b'.repeat(43)}` });
        expectStatus(formApi, 400);
        assert.match(json<{ detail: string }>(formApi).detail, /link is not valid/, 'a client that does not ask for HTML gets JSON');
        // Markup in a token is escaped, never echoed as markup.
        const shown = await t.app.inject({ url: `${path}?token=${encodeURIComponent('<script>x</script>')}`, headers: browser });
        assert.equal(shown.body.includes('<script>'), false);
      }
      const plain = await t.app.inject({ method: 'POST', url: VERIFY, headers: { 'content-type': 'text/plain' }, payload: 'token=x' });
      assert.ok(plain.statusCode >= 400 && plain.statusCode < 500, `${plain.statusCode}`);
    });

    it('the page\'s button (a form post) verifies and answers with a page', async () => {
      const owner = await signUp(t.app);
      const token = await newToken(owner);
      const res = await t.app.inject({ method: 'POST', url: VERIFY, remoteAddress: remoteAddress(), headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${token}` });
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.ok(res.body.includes(`${owner.email} is verified`));
      assert.equal((await me(owner)).email_verified, true);
    });

    it('first passkey with a verified address: inbox notice, activity, a mail with an undo link; the undo page uses nothing; undo removes it and ends every session, once', async () => {
      const owner = await signUp(t.app);
      await verifyEmail(t, owner);
      const other = await t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: remoteAddress(), payload: { email: owner.email, password: owner.password } });
      const otherAuth = { authorization: `Bearer ${json<{ session_token: string }>(other).session_token}` };
      await addPasskey(t, owner);
      const [device] = await t.services.store.passkeys.listForUser(owner.user.id);
      assert.ok(device);
      const [mail] = await mailsOf(t, owner.user.id, 'passkey_added');
      assert.ok(mail);
      assert.equal(mail.to, owner.email);
      assert.equal(mail.subject, 'A passkey was added to your Mandate account');
      assert.ok(mail.text.includes(`"${device.name}"`));
      const inbox = json<{ items: { type: string; title: string; body: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth })).items;
      const notice = inbox.find((n) => n.title === 'A passkey was added to your account');
      assert.ok(notice, JSON.stringify(inbox));
      assert.equal(notice.type, 'security');
      assert.ok(notice.body.includes(device.name) && notice.body.includes(owner.email) && notice.body.includes('undo link'));
      assert.equal(notice.body.includes('token='), false, 'the link itself is in the mail only');
      assert.equal(inbox.filter((n) => n.type === 'security').length, 1, 'one notice, not also "New passkey added"');
      const trail = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 5, action: 'passkey.first_added' });
      assert.deepEqual(trail[0]?.detail, { device_id: device.id, name: device.name, mailed: true });

      const token = await lastLinkToken(t, owner.user.id, 'passkey_added', UNDO);
      const shown = await page(token, UNDO);
      expectStatus(shown, 200);
      assert.ok(shown.body.includes(device.name) && shown.body.includes('Remove it and sign out everywhere'));
      assert.equal((await t.services.store.passkeys.listForUser(owner.user.id)).length, 1, 'the page removed nothing');

      const undone = await confirm(token, UNDO);
      expectStatus(undone, 200);
      assert.deepEqual(json(undone), { undone: true, device_id: device.id, removed: true, passkeys_removed: [device.id], grants_revoked: 0, sessions_ended: true });
      assert.deepEqual(await t.services.store.passkeys.listForUser(owner.user.id), []);
      expectStatus(await t.app.inject({ url: '/api/me', headers: owner.auth }), 401);
      expectStatus(await t.app.inject({ url: '/api/me', headers: otherAuth }), 401);
      expectStatus(await confirm(token, UNDO), 400);
      const undoneTrail = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 5, action: 'passkey.undone' });
      assert.deepEqual(undoneTrail[0]?.detail, { device_id: device.id, removed: true, passkeys_removed: [device.id], grants_revoked: [] });
    });

    it('a second passkey sends no such mail; two undo confirmations at once: exactly one acts, and it removes both', async () => {
      const owner = await signUp(t.app);
      await verifyEmail(t, owner);
      const key = await addPasskey(t, owner);
      const session = await withPasskeySession(t, { ...owner, authenticator: key });
      await addPasskey(t, session);
      assert.equal((await mailsOf(t, owner.user.id, 'passkey_added')).length, 1, 'only the first passkey is mailed about');
      const inbox = json<{ items: { title: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: session.auth })).items.map((n) => n.title);
      assert.ok(inbox.includes('New passkey added'));
      const token = await lastLinkToken(t, owner.user.id, 'passkey_added', UNDO);
      const answers = await Promise.all([confirm(token, UNDO), confirm(token, UNDO), confirm(token, UNDO)]);
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 400, 400]);
      assert.deepEqual(await t.services.store.passkeys.listForUser(owner.user.id), [], 'the first passkey went, and the second, enrolled through it, too');
    });

    it('first passkey while unverified: the notice says no link was mailed; verifying within 24 h mails the undo link, and a second notice says so', async () => {
      const owner = await signUp(t.app);
      await addPasskey(t, owner);
      assert.equal((await mailsOf(t, owner.user.id, 'passkey_added')).length, 0);
      const inbox = async () => json<{ items: { title: string; body: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth })).items;
      const first = (await inbox()).find((n) => n.title === 'A passkey was added to your account')?.body ?? '';
      assert.match(first, /No undo link was mailed: your email address was not verified yet\. Not you\? Change your password at once\./);
      // Issue 27, item 7: it stays in the inbox after the address is verified, so it must not ask to verify.
      assert.doesNotMatch(first, /verify your/i);
      await verifyEmail(t, owner);
      const [mail] = await mailsOf(t, owner.user.id, 'passkey_added');
      assert.ok(mail, 'the undo link is mailed once the address is proven');
      const [latest] = await inbox();
      assert.equal(latest?.title, 'Undo link mailed for your new passkey');
      assert.match(latest?.body ?? '', new RegExp(`Your address ${owner.email.replace(/[.+]/g, '\\$&')} is verified, so Mandate mailed it the link to undo adding`));
      expectStatus(await confirm(await lastLinkToken(t, owner.user.id, 'passkey_added', UNDO), UNDO), 200);
      assert.deepEqual(await t.services.store.passkeys.listForUser(owner.user.id), []);
    });
  });
}

inProcess('sqlite');
inProcess('postgres');

/** Over real HTTP: the service as its own process, mail to a stand-in relay that checks each message. */
function overSmtp(backend: 'sqlite' | 'postgres'): void {
  describe(`email verification over HTTP with an SMTP relay (${backend})`, () => {
    let smtp: SmtpStandIn;
    let server: ServerProcess;
    let dropDb: (() => Promise<void>) | undefined;
    before(async () => {
      smtp = await startSmtpStandIn({ from: FROM });
      const db = backend === 'postgres' ? await freshPostgresDatabase() : undefined;
      dropDb = db?.drop;
      server = await startServer({ name: `mail-${backend}`, healthyWithinMs: 120_000, env: { SMTP_URL: smtp.url, MAIL_FROM: FROM, OUTBOX_POLL_MS: '200', LOG_LEVEL: 'info', ...(db ? { DATABASE_URL: db.url } : {}) } });
      smtp.expectBaseUrl(server.baseUrl);
    });
    after(async () => {
      await server?.stop();
      await smtp?.close();
      await dropDb?.();
    });

    const signUpOwner = async (email = `owner-${randomBytes(5).toString('hex')}@example.com`) => {
      const password = `pw-${randomBytes(9).toString('base64url')}`;
      const res = expectReply(await call<{ user: { id: string }; session_token: string }>(server, 'POST', '/api/users', { email, password }), 200, 'sign-up');
      return { id: res.body.user.id, email, password, auth: { authorization: `Bearer ${res.body.session_token}` } };
    };
    const verifyOverMail = async (owner: { email: string; auth: Record<string, string> }, index = 0) => {
      expectReply(await call(server, 'POST', '/api/email/send', {}, owner.auth), 200, 'send');
      const mail = await smtp.mailTo(owner.email, { index });
      return tokenOf(linkIn(mail, VERIFY));
    };

    it('the mail reaches the relay (authenticated, from MAIL_FROM, plain text, a link for BASE_URL); its page uses nothing; POST verifies; reuse is refused', async () => {
      const owner = await signUpOwner();
      const token = await verifyOverMail(owner);
      const mail = await smtp.mailTo(owner.email);
      assert.equal(mail.user, smtp.user);
      assert.deepEqual([mail.envelopeFrom, mail.from], ['mailer@mandate.test', 'mailer@mandate.test']);
      assert.deepEqual(mail.to, [owner.email]);
      assert.equal(mail.subject, 'Verify your email address for Mandate');
      const pageRes = await fetch(`${server.url}${VERIFY}?token=${token}`, { headers: { accept: 'text/html' } });
      assert.equal(pageRes.status, 200);
      assert.ok((await pageRes.text()).includes(`Verify ${owner.email}`));
      assert.equal((await call<{ email_verified: boolean }>(server, 'GET', '/api/me', undefined, owner.auth)).body.email_verified, false);
      // The button, as a browser sends it.
      const form = await fetch(`${server.url}${VERIFY}`, { method: 'POST', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
      assert.equal(form.status, 200);
      assert.ok((await form.text()).includes('is verified'));
      assert.equal((await call<{ email_verified: boolean }>(server, 'GET', '/api/me', undefined, owner.auth)).body.email_verified, true);
      assert.equal((await call(server, 'POST', VERIFY, { token })).status, 400);
      assert.deepEqual(smtp.problems, []);
      assert.equal(smtp.authFailures, 0);
    });

    it('attack: two confirmations of one link at once over HTTP, exactly one 200', async () => {
      const owner = await signUpOwner();
      const token = await verifyOverMail(owner);
      const answers = await Promise.all(Array.from({ length: 6 }, () => call(server, 'POST', VERIFY, { token })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400, 400, 400, 400]);
    });

    it('attack: an account made with someone else\'s address gets nothing for user:email, and the link goes to the real mailbox', async () => {
      const victim = `victim-${randomBytes(5).toString('hex')}@example.com`;
      const impostor = await signUpOwner(victim);
      const key = new SoftAuthenticator({ origin: server.baseUrl });
      const opt = expectReply(await call<{ challenge: string; options: { challenge: string; user: { id: string } } }>(server, 'GET', '/api/webauthn/register/options', undefined, impostor.auth), 200, 'options');
      expectReply(await call(server, 'POST', '/api/webauthn/register/verify', { challenge: opt.body.challenge, attestation: key.register(opt.body.options) }, impostor.auth), 200, 'register');
      const owner: RemoteOwner = { ...impostor, authenticator: key };
      const agent = await remoteAgent(server, owner, 'Impostor');
      const fields = (await call<{ fields: { name: string }[] }>(server, 'GET', '/api/user-info/fields', undefined, impostor.auth)).body.fields.map((f) => f.name);
      assert.equal(fields.includes('user:email'), false);
      const asked = await call<{ detail: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agent.id, site: 'links-by-email.example', scopes: ['orders:read'], user_info: ['user:email'], agent_jwt: await agent.jwt() });
      assert.equal(asked.status, 400);
      assert.match(asked.body.detail, /unknown user_info field: "user:email"/);
      expectReply(await remoteAccessRequest(server, agent, 'links-by-email.example'), 200, 'a request without the email is fine');
      // Asking for a link sends it to the address's real holder, who never passes it on.
      expectReply(await call(server, 'POST', '/api/email/send', {}, impostor.auth), 200, 'send');
      const mail = await smtp.mailTo(victim);
      assert.deepEqual(mail.to, [victim]);
      assert.equal((await call<{ email_verified: boolean }>(server, 'GET', '/api/me', undefined, impostor.auth)).body.email_verified, false);
      assert.deepEqual(smtp.problems, []);
    });

    it('first passkey with a verified address: the undo link arrives by mail; undo removes it and every session; a second passkey mails nothing', async () => {
      const owner = await signUpOwner();
      const verifyToken = await verifyOverMail(owner);
      expectReply(await call(server, 'POST', VERIFY, { token: verifyToken }), 200, 'verify');
      const register = async (auth: Record<string, string>, key: SoftAuthenticator) => {
        const opt = expectReply(await call<{ challenge: string; options: { challenge: string; user: { id: string } } }>(server, 'GET', '/api/webauthn/register/options', undefined, auth), 200, 'options');
        expectReply(await call(server, 'POST', '/api/webauthn/register/verify', { challenge: opt.body.challenge, attestation: key.register(opt.body.options), name: 'Attacker laptop' }, auth), 200, 'register');
      };
      const key = new SoftAuthenticator({ origin: server.baseUrl });
      await register(owner.auth, key);
      const mail = await smtp.mailTo(owner.email, { index: 1 });
      assert.equal(mail.subject, 'A passkey was added to your Mandate account');
      assert.ok(mail.text.includes('"Attacker laptop"'));
      const undoToken = tokenOf(linkIn(mail, UNDO));
      const pageRes = await fetch(`${server.url}${UNDO}?token=${undoToken}`);
      assert.equal(pageRes.status, 200);
      assert.ok((await pageRes.text()).includes('Attacker laptop'));
      assert.equal((await call<unknown[]>(server, 'GET', '/api/devices', undefined, owner.auth)).status, 200, 'the page changed nothing: the session still works');
      const undone = await call<{ removed: boolean }>(server, 'POST', UNDO, { token: undoToken });
      assert.equal(undone.status, 200);
      assert.equal(undone.body.removed, true);
      assert.equal((await call(server, 'GET', '/api/me', undefined, owner.auth)).status, 401, 'every session ended');
      assert.equal((await call(server, 'POST', UNDO, { token: undoToken })).status, 400);

      // The owner signs in again, adds their own first passkey (a new undo mail), then a second one: no mail for that.
      const login = expectReply(await call<{ session_token: string }>(server, 'POST', '/api/login', { email: owner.email, password: owner.password }), 200, 'login');
      const auth = { authorization: `Bearer ${login.body.session_token}` };
      const mine = new SoftAuthenticator({ origin: server.baseUrl });
      await register(auth, mine);
      await smtp.mailTo(owner.email, { index: 2 });
      const lo = expectReply(await call<{ challenge: string; options: { challenge: string } }>(server, 'GET', '/api/webauthn/login/options'), 200, 'login options');
      const pk = expectReply(await call<{ session_token: string }>(server, 'POST', '/api/webauthn/login/verify', { challenge: lo.body.challenge, assertion: mine.assert(lo.body.options) }), 200, 'passkey login');
      await register({ authorization: `Bearer ${pk.body.session_token}` }, new SoftAuthenticator({ origin: server.baseUrl }));
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(smtp.messages.filter((m) => m.to.includes(owner.email)).length, 3, 'verify, first passkey, first passkey again: nothing for the second passkey');
      assert.deepEqual(smtp.problems, []);
    });

    it('attack: whoever holds only the password enrols a passkey, signs in with it, enrols a second and approves with it; the undo leaves nothing of it and the owner enrols their own', async () => {
      const owner = await signUpOwner();
      expectReply(await call(server, 'POST', VERIFY, { token: await verifyOverMail(owner) }), 200, 'verify');
      // The attacker: the password only.
      const stolen = expectReply(await call<{ session_token: string }>(server, 'POST', '/api/login', { email: owner.email, password: owner.password }), 200, 'attacker login');
      const register = async (auth: Record<string, string>, key: SoftAuthenticator, name: string) => {
        const opt = expectReply(await call<{ challenge: string; options: { challenge: string; user: { id: string } } }>(server, 'GET', '/api/webauthn/register/options', undefined, auth), 200, 'options');
        return call(server, 'POST', '/api/webauthn/register/verify', { challenge: opt.body.challenge, attestation: key.register(opt.body.options), name }, auth);
      };
      const passkeyLogin = async (key: SoftAuthenticator) => {
        const lo = expectReply(await call<{ challenge: string; options: { challenge: string } }>(server, 'GET', '/api/webauthn/login/options'), 200, 'login options');
        return call<{ session_token: string }>(server, 'POST', '/api/webauthn/login/verify', { challenge: lo.body.challenge, assertion: key.assert(lo.body.options) });
      };
      const first = new SoftAuthenticator({ origin: server.baseUrl });
      expectReply(await register({ authorization: `Bearer ${stolen.body.session_token}` }, first, 'First'), 200, 'first passkey');
      const firstSession = expectReply(await passkeyLogin(first), 200, 'sign in with the first');
      const second = new SoftAuthenticator({ origin: server.baseUrl });
      expectReply(await register({ authorization: `Bearer ${firstSession.body.session_token}` }, second, 'Second'), 200, 'second passkey');
      const secondSession = expectReply(await passkeyLogin(second), 200, 'sign in with the second');
      const attacker: RemoteOwner = { ...owner, auth: { authorization: `Bearer ${secondSession.body.session_token}` }, authenticator: second };
      const agent = await remoteAgent(server, attacker, 'Attacker agent');
      await remoteGrant(server, attacker, agent, 'bank.example');
      assert.equal((await call<unknown[]>(server, 'GET', '/api/grants', undefined, attacker.auth)).body.length, 1);

      // The owner opens the link mailed about the first passkey.
      const undoToken = tokenOf(linkIn(await smtp.mailTo(owner.email, { index: 1 }), UNDO));
      const undone = expectReply(await call<{ passkeys_removed: string[]; grants_revoked: number }>(server, 'POST', UNDO, { token: undoToken }), 200, 'undo');
      // Nothing of the attacker's is left: no passkey signs in, no session works, no grant stands.
      for (const key of [second, first]) assert.equal((await passkeyLogin(key)).status, 401, 'a removed passkey no longer signs in');
      assert.equal(undone.body.passkeys_removed.length, 2, 'both passkeys removed');
      assert.equal(undone.body.grants_revoked, 1, 'what the second passkey approved is revoked');
      for (const auth of [attacker.auth, { authorization: `Bearer ${firstSession.body.session_token}` }, { authorization: `Bearer ${stolen.body.session_token}` }]) {
        assert.equal((await call(server, 'GET', '/api/me', undefined, auth)).status, 401);
      }
      // The owner signs in with the password (an attacker's is next to change) and enrols their own passkey.
      const login = expectReply(await call<{ session_token: string }>(server, 'POST', '/api/login', { email: owner.email, password: owner.password }), 200, 'owner login');
      const auth = { authorization: `Bearer ${login.body.session_token}` };
      assert.deepEqual((await call<unknown[]>(server, 'GET', '/api/grants', undefined, auth)).body, []);
      const mine = new SoftAuthenticator({ origin: server.baseUrl });
      expectReply(await register(auth, mine, 'Mine'), 200, 'the owner enrols their own passkey from a password session');
      expectReply(await passkeyLogin(mine), 200, 'and signs in with it');
      const devices = (await call<{ kind: string; name: string }[]>(server, 'GET', '/api/devices', undefined, auth)).body.filter((d) => d.kind === 'passkey');
      assert.deepEqual(devices.map((d) => d.name), ['Mine']);
    });

    it('the SMTP password never reaches the log', () => {
      assert.equal(server.logs().includes(smtp.pass), false);
      assert.equal(server.logs().includes(smtp.url), false);
    });
  });
}

overSmtp('sqlite');
overSmtp('postgres');

describe('without SMTP_URL (development)', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer({ name: 'no-smtp', healthyWithinMs: 120_000, env: { OUTBOX_POLL_MS: '200' } });
  });
  after(() => server?.stop());

  it('says so at start, and writes the mail, link included, to the log instead of sending it', async () => {
    assert.match(server.logs(), /SMTP_URL is not set: mail \(verification and undo links\) is written to this log/);
    const email = `dev-${randomBytes(4).toString('hex')}@example.com`;
    const res = expectReply(await call<{ session_token: string }>(server, 'POST', '/api/users', { email, password: 'correct horse battery' }), 200, 'sign-up');
    const auth = { authorization: `Bearer ${res.body.session_token}` };
    expectReply(await call(server, 'POST', '/api/email/send', {}, auth), 200, 'send');
    const line = await until('the mail in the log', () => server.logs().split('\n').find((l) => l.includes('mail not sent (SMTP_URL is not set') && l.includes(email)));
    const link = /(http:\/\/localhost:\d+\/api\/email\/verify\?token=[A-Za-z0-9_-]{43})/.exec(line)?.[1];
    assert.ok(link, line);
    assert.equal(new URL(link).origin, server.baseUrl);
    // The request log never shows a link's token, even here.
    await fetch(`${server.url}${VERIFY}?token=${tokenOf(link)}`);
    expectReply(await call(server, 'POST', VERIFY, { token: tokenOf(link) }), 200, 'verify');
    const outsideMail = server.logs().split('\n').filter((l) => !l.includes('mail not sent (SMTP_URL is not set'));
    assert.equal(outsideMail.some((l) => l.includes(tokenOf(link))), false, 'the token is only in the dev-mode mail line');
  });
});

describe('mail through the outbox', () => {
  let smtp: SmtpStandIn;
  before(async () => {
    smtp = await startSmtpStandIn({ from: FROM });
    smtp.expectBaseUrl('http://localhost:8080');
  });
  after(() => smtp.close());

  it('a temporary SMTP failure is retried after the backoff, and the mail arrives', async () => {
    const t = await testApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: FROM, OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
    try {
      const owner = await signUp(t.app);
      smtp.failNext(1);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/email/send', headers: owner.auth, payload: {} }), 200);
      await t.services.outbox.drain();
      const [queued] = await t.services.store.outbox.list({ userId: owner.user.id, kind: 'email_verify' });
      assert.ok(queued);
      assert.equal(queued.sentAt, null);
      assert.equal(queued.failedAt, null, 'a 451 is retried, not given up');
      assert.match(queued.lastError ?? '', /SMTP: .*451/);
      assert.equal(queued.lastError?.includes(smtp.pass), false);
      t.clock.advance(60_000);
      await t.services.outbox.drain();
      const delivered = smtp.messages.filter((m) => m.to.includes(owner.email));
      assert.equal(delivered.length, 2, 'refused once, then accepted');
      assert.notEqual((await t.services.store.outbox.list({ userId: owner.user.id, kind: 'email_verify' }))[0]?.sentAt, null);
      expectStatus(await t.app.inject({ method: 'POST', url: VERIFY, payload: { token: tokenOf(linkIn(delivered[1]!, VERIFY)) } }), 200);
      assert.deepEqual(smtp.problems, []);
    } finally {
      await t.close();
    }
  });

  it('with KEY_ENCRYPTION_KEY the stored mail is sealed: the database holds no working link', async () => {
    const t = await testApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: FROM, KEY_ENCRYPTION_KEY: 'k'.repeat(32), OUTBOX_POLL_MS: '600000' } });
    try {
      const owner = await signUp(t.app);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/email/send', headers: owner.auth, payload: {} }), 200);
      const [row] = await t.services.store.outbox.list({ userId: owner.user.id, kind: 'email_verify' });
      assert.ok(row);
      assert.deepEqual(Object.keys(row.payload), ['sealed']);
      assert.equal(JSON.stringify(row.payload).includes(owner.email), false);
      await t.services.outbox.drain();
      const mail = await smtp.mailTo(owner.email);
      const token = tokenOf(linkIn(mail, VERIFY));
      assert.equal(JSON.stringify(row.payload).includes(token), false);
      expectStatus(await t.app.inject({ method: 'POST', url: VERIFY, payload: { token } }), 200);
    } finally {
      await t.close();
    }
  });

  it('logs at trace level never carry a link\'s token or the SMTP password', async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const dir = mkdtempSync(join(tmpdir(), 'mandate-mail-logs-'));
    const store = await openSqliteStore(dir);
    const { app, services } = await buildApp({ config: parseConfig({ DATA_DIR: dir, LOG_LEVEL: 'trace', SMTP_URL: smtp.url, MAIL_FROM: FROM, BASE_URL: 'http://localhost:8080' }), store, logStream });
    const secrets: string[] = [smtp.pass];
    try {
      const email = `logs-${randomBytes(4).toString('hex')}@example.com`;
      const auth = { authorization: `Bearer ${(await app.inject({ method: 'POST', url: '/api/users', payload: { email, password: 'pw-logs-1234567' } })).json().session_token as string}` };
      await app.inject({ method: 'POST', url: '/api/email/send', headers: auth, payload: {} });
      await services.outbox.drain();
      const token = tokenOf(linkIn(await smtp.mailTo(email), VERIFY));
      secrets.push(token);
      await app.inject({ url: `${VERIFY}?token=${token}` });
      await app.inject({ method: 'POST', url: VERIFY, payload: { token } });
      const key = new SoftAuthenticator();
      const opt = (await app.inject({ url: '/api/webauthn/register/options', headers: auth })).json() as { challenge: string; options: { challenge: string; user: { id: string } } };
      await app.inject({ method: 'POST', url: '/api/webauthn/register/verify', headers: auth, payload: { challenge: opt.challenge, attestation: key.register(opt.options) } });
      await services.outbox.drain();
      const undo = tokenOf(linkIn(await smtp.mailTo(email, { index: 1 }), UNDO));
      secrets.push(undo);
      await app.inject({ url: `${UNDO}?token=${undo}` });
      await app.inject({ method: 'POST', url: UNDO, headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${undo}` });
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const log = lines.join('');
    assert.match(log, /\[redacted\]/, 'the token of a page view is redacted from the request log');
    for (const secret of secrets) assert.equal(log.includes(secret), false, `a secret reached the log: ${secret.slice(0, 8)}...`);
  });
});
