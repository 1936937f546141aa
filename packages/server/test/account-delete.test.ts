import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { createAgentJwt } from '@mandate/protocol';
import { FixedClock, seconds } from '../src/clock.ts';
import { newId } from '../src/domain/ids.ts';
import { CONFIRM_MISMATCH, PASSKEY_SESSION_REQUIRED, PASSWORD_REQUIRED, PASSWORD_WRONG } from '../src/domain/privacy/account-deletion.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { ownerWithPasskey, postAccessRequest, withPasskeySession, type Owner } from './helpers/approvals.ts';
import { getPass, verify, verifyBody } from './helpers/passes.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { lastLinkToken } from './helpers/email-links.ts';
import { freePort } from './helpers/server-process.ts';
import { startRelyingParty, type Jwks, type RelyingPartyStandIn } from './helpers/stand-ins/relying-party.ts';

// Account deletion (decisions §16, interface.md "account" row; issue 23 item 7), in process on both
// stores, the app listening on a real port so a relying party (openid-client) can sign an agent in
// and the RP stand-in can receive the back-channel logout that the deletion queues.

const DELETE = '/api/account/delete';

interface SnapshotBody {
  rev_seq: number;
  revoked_agents: { id: string; flag: string; rev_seq: number }[];
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`account deletion (${backend})`, () => {
    let t: TestApp;
    let base: string;
    let rp: RelyingPartyStandIn;
    let rpClientId = 'not registered yet';

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await testApp({ backend, env: { BASE_URL: base, OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
      await t.app.listen({ port, host: '127.0.0.1' });
      rp = await startRelyingParty({
        issuer: base,
        get clientId() {
          return rpClientId;
        },
        jwks: async () => (await t.app.inject({ url: '/api/v1/jwks' })).json<Jwks>(),
        now: () => t.clock.now(),
      });
    });
    after(async () => {
      await t.close();
      await rp.close();
    });

    const del = (auth: Record<string, string>, payload: Record<string, unknown>, address = remoteAddress()) =>
      t.app.inject({ method: 'POST', url: DELETE, headers: auth, payload, remoteAddress: address });
    const me = (auth: Record<string, string>) => t.app.inject({ url: '/api/me', headers: auth });
    const login = (email: string, password: string, address = remoteAddress()) => t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: address, payload: { email, password } });
    const snapshot = async () => json<SnapshotBody>(await t.app.inject({ url: '/api/v1/revocation' }));

    /** An owner with a passkey, an agent with a grant and a pass, an open request, a device, settings, a notification, a mailed link. */
    async function richOwner(): Promise<{ owner: Owner; agent: TestAgent; idle: TestAgent; pass: string; linkToken: string }> {
      const owner = await ownerWithPasskey(t, new SoftAuthenticator({ origin: base }));
      const agent = await createAgent(t, owner, 'Shopper');
      const idle = await createAgent(t, owner, 'Idle');
      await createGrant(t, agent, { site: 'shop.example' });
      const pass = (await getPass(t, agent, 'shop.example')).access_token;
      expectStatus(await postAccessRequest(t, idle, { site: 'books.example' }), 200);
      const { store } = t.services;
      await store.pushDevices.upsert({ id: newId('dev'), userId: owner.user.id, kind: 'fcm', address: `fcm-${randomBytes(8).toString('hex')}`, p256dh: null, auth: null, name: 'Phone', createdAt: t.clock.now(), lastUsedAt: null });
      await store.notifySettings.put({ userId: owner.user.id, approvals: true, notes: false, sessionNotices: true, quietHours: null, updatedAt: t.clock.now() });
      await t.services.notifier.security(owner.user.id, 'Hello', 'a notice with free text');
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/email/send', headers: owner.auth, payload: {} }), 200);
      const linkToken = await lastLinkToken(t, owner.user.id, 'email_verify', '/api/email/verify');
      // The receipt of an approval (decisions §29): it names the person and holds their passkey's signature.
      await store.receipts.record({
        txnId: newId('t'), userId: owner.user.id, agentId: agent.id, site: 'shop.example', action: 'checkout', detailsDigest: null, nonce: randomBytes(16).toString('base64url'),
        approvedAt: t.clock.now(), credentialId: 'cred', authenticatorData: 'authdata', clientDataJson: 'clientdata', signature: 'sig',
      });
      return { owner, agent, idle, pass, linkToken };
    }

    it('refuses a wrong confirm, a missing password and a wrong password, and erases nothing', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      for (const confirm of ['someone@example.com', '', `${owner.email}x`]) {
        const res = await del(owner.auth, { confirm, password: owner.password });
        expectStatus(res, 400);
        assert.equal(json(res).detail, CONFIRM_MISMATCH);
      }
      const missing = await del(owner.auth, { confirm: owner.email });
      expectStatus(missing, 400);
      assert.equal(json(missing).detail, PASSWORD_REQUIRED);
      const wrong = await del(owner.auth, { confirm: owner.email, password: 'not my password' });
      expectStatus(wrong, 403);
      assert.equal(json(wrong).detail, PASSWORD_WRONG);
      expectStatus(await t.app.inject({ method: 'POST', url: DELETE, payload: { confirm: owner.email, password: owner.password } }), 401);
      // Bad shapes are 422, as everywhere.
      expectStatus(await del(owner.auth, { password: owner.password }), 422);
      expectStatus(await del(owner.auth, { confirm: 5 }), 422);
      expectStatus(await me(owner.auth), 200);
      assert.equal((await t.services.store.agents.byId(agent.id))?.status, 'active');
    });

    it('the confirm is compared as emails are stored (trimmed, any case); the cookie is cleared; the old session is gone', async () => {
      const owner = await signUp(t.app);
      const res = await del(owner.auth, { confirm: `  ${owner.email.toUpperCase()} `, password: owner.password });
      expectStatus(res, 200);
      assert.deepEqual(json(res), { deleted: true });
      const cookie = String(res.headers['set-cookie']);
      assert.match(cookie, /^session=;/);
      assert.match(cookie, /Expires=Thu, 01 Jan 1970/i);
      expectStatus(await me(owner.auth), 401);
      expectStatus(await login(owner.email, owner.password), 401);
    });

    it('wrong passwords are bounded: counted with password sign-in, 429 past the limit; the owner elsewhere still gets an attempt', async () => {
      const owner = await signUp(t.app);
      const from = remoteAddress();
      const limit = t.config.loginThrottle.perAccount;
      for (let i = 0; i < limit; i++) expectStatus(await del(owner.auth, { confirm: owner.email, password: `guess ${i}` }, from), 403);
      const refused = await del(owner.auth, { confirm: owner.email, password: 'one more guess' }, from);
      expectStatus(refused, 429);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      // The same counts: sign-in from that address is refused too, even with the right password.
      expectStatus(await login(owner.email, owner.password, from), 429);
      expectStatus(await del(owner.auth, { confirm: owner.email, password: owner.password }, from), 429);
      // Another address with no failure at this account gets its one attempt.
      expectStatus(await del(owner.auth, { confirm: owner.email, password: owner.password }), 200);
    });

    it('an account without a password is deleted from a passkey session only', async () => {
      const owner = await ownerWithPasskey(t, new SoftAuthenticator({ origin: base }));
      await t.services.store.users.update(owner.user.id, { passwordHash: '' });
      const res = await del(owner.auth, { confirm: owner.email });
      expectStatus(res, 403);
      assert.equal(json(res).detail, PASSKEY_SESSION_REQUIRED);
      assert.ok(json(res).next_step);
      const passkeyOwner = await withPasskeySession(t, owner);
      expectStatus(await del(passkeyOwner.auth, { confirm: owner.email }), 200);
      expectStatus(await me(owner.auth), 401);
    });

    it('erases everything: agents refused everywhere, grants, requests, sign-ins (with a back-channel logout), credentials, devices, messages, profile; activity anonymised; another owner untouched', async () => {
      const { store } = t.services;
      const { owner, agent, idle, pass, linkToken } = await richOwner();
      const other = await richOwner();

      // An OIDC client (of a third person) with a back-channel logout URI; the owner's agent signs in there.
      const siteOwner = await signUp(t.app);
      const redirectUri = `${base}/cb-delete`;
      const reg = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: siteOwner.auth, payload: { name: 'Shop', redirect_uris: [redirectUri], backchannel_logout_uri: rp.uri } });
      expectStatus(reg, 200);
      const client = json<{ client_id: string; client_secret: string }>(reg);
      rpClientId = client.client_id;
      const config = await oidc.discovery(new URL(base), client.client_id, { redirect_uris: [redirectUri] }, oidc.ClientSecretPost(client.client_secret), { execute: [oidc.allowInsecureRequests] });
      await createGrant(t, agent, { site: new URL(base).host, scopes: ['openid', 'profile'] });
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const header = await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()), lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu: url.href });
      const authorized = await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': header } });
      assert.equal(authorized.status, 302, await authorized.text());
      const tokens = await oidc.authorizationCodeGrant(config, new URL(authorized.headers.get('location') ?? ''), { pkceCodeVerifier: verifier, idTokenExpected: true });
      const sid = tokens.claims()?.sid;
      assert.ok(sid);

      const seqBefore = (await snapshot()).rev_seq;
      const activityBefore = await store.activity.list(owner.user.id, { before: 0, limit: 100 });
      assert.ok(activityBefore.some((a) => a.ip !== null), 'some records carry an address');
      assert.equal((await store.authzRequests.listPendingForUser(owner.user.id, t.clock.now())).length, 1);

      // A phone code and a set of recovery codes (decisions §14), which the deletion erases too.
      const at = t.clock.now();
      await store.phoneCodes.create({ id: `pc-${randomBytes(6).toString('hex')}`, userId: owner.user.id, purpose: 'verify_phone', phone: '+14155550123', codeHash: 'a'.repeat(64), attemptsLeft: 5, createdAt: at, expiresAt: at + 600_000 });
      await store.recoveryCodes.replace(owner.user.id, ['b'.repeat(64), 'c'.repeat(64)], at);
      await store.oauthIdentities.link({ issuer: 'https://idp.example', subject: `sub-${owner.user.id}`, userId: owner.user.id, provider: 'google', createdAt: at });

      const res = await del(owner.auth, { confirm: owner.email, password: owner.password });
      expectStatus(res, 200);

      // Agents: tombstoned at higher rev_seqs, listed, refused by cloud verify, the token endpoint and OIDC.
      for (const a of [agent, idle]) assert.equal((await store.agents.byId(a.id))?.status, 'removed');
      const snap = await snapshot();
      assert.ok(snap.rev_seq > seqBefore);
      for (const a of [agent, idle]) {
        const entry = snap.revoked_agents.find((e) => e.id === a.id);
        assert.ok(entry, `${a.name} is on the revocation list`);
        assert.ok(entry.rev_seq > seqBefore);
      }
      const verdict = await verify(t, await verifyBody(t, agent, pass));
      assert.equal(verdict.valid, false);
      assert.equal(verdict.error, 'agent_revoked');
      const token = await t.app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agent.id, site: 'shop.example', agent_jwt: await agent.jwt() } });
      assert.ok(token.statusCode >= 400 && token.statusCode < 500, `token endpoint: ${token.statusCode}`);
      await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token ?? ''));
      const again = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
      const againHeader = await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()), lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu: again.href });
      const refusedSignIn = await fetch(again, { redirect: 'manual', headers: { 'x-service-agent': againHeader } });
      const where = new URL(refusedSignIn.headers.get('location') ?? 'http://none.invalid/');
      assert.equal(where.searchParams.get('code'), null, `OIDC signs the removed agent in no more: ${refusedSignIn.status} ${where.href}`);
      assert.equal((await store.oidcSignIns.listLiveForUser(owner.user.id, t.clock.now())).length, 0);

      // Grants and requests.
      assert.equal((await store.grants.listActiveForUser(owner.user.id)).length, 0);
      assert.equal((await store.authzRequests.listPendingForUser(owner.user.id, t.clock.now())).length, 0);

      // The back-channel logout reaches the relying party.
      await t.services.outbox.drain();
      const logouts = rp.accepted().filter((r) => r.claims.sid === sid);
      assert.equal(logouts.length, 1, JSON.stringify(rp.rejections));

      // Credentials, devices, sessions, links, settings, notifications, unsent messages.
      assert.deepEqual(await store.passkeys.listForUser(owner.user.id), []);
      assert.deepEqual(await store.pushDevices.listForUser(owner.user.id), []);
      // Receipts are anonymised with the activity: txn, agent, site and time kept; what the passkey signed dropped.
      const receipts = await store.receipts.listForUser(owner.user.id);
      assert.equal(receipts.length, 1);
      assert.deepEqual({ ...receipts[0], txnId: '', approvedAt: 0 }, {
        txnId: '', userId: owner.user.id, agentId: agent.id, site: 'shop.example', action: '', detailsDigest: null, nonce: '', approvedAt: 0,
        credentialId: '', authenticatorData: '', clientDataJson: '', signature: '',
      });
      assert.equal(await store.notifySettings.get(owner.user.id), undefined);
      assert.deepEqual(await store.notifications.list(owner.user.id, { before: 0, limit: 100, since: 0 }), []);
      const left = await store.outbox.list({ userId: owner.user.id, limit: 1000 });
      assert.ok(left.every((m) => m.channel === 'backchannel' || m.sentAt !== null || m.failedAt !== null), JSON.stringify(left.map((m) => [m.channel, m.kind])));
      const link = await t.app.inject({ method: 'POST', url: '/api/email/verify', remoteAddress: remoteAddress(), payload: { token: linkToken } });
      assert.ok(link.statusCode >= 400 && link.statusCode < 500, `the mailed link is dead: ${link.statusCode}`);
      assert.equal(await store.emailTokens.deleteForUser(owner.user.id), 0, 'no mailed link is left');
      assert.equal(await store.phoneCodes.deleteForUser(owner.user.id), 0, 'no phone code is left');
      assert.equal(await store.recoveryCodes.deleteForUser(owner.user.id), 0, 'no recovery code is left');
      assert.deepEqual(await store.oauthIdentities.listForUser(owner.user.id), [], 'no linked identity is left');
      assert.equal(await store.oauthIdentities.byIdentity('https://idp.example', `sub-${owner.user.id}`), undefined);

      // Profile blanked; the email is free.
      const erased = await store.users.byId(owner.user.id);
      assert.ok(erased);
      assert.match(erased.email, /^deleted-[0-9a-f]{32}@invalid$/);
      assert.equal(erased.displayName, '');
      assert.equal(erased.passwordHash, '');
      assert.equal(erased.phone, null);
      assert.equal(erased.emailVerified, false);
      assert.equal(await store.users.byEmail(owner.email), undefined);

      // Activity: the bare sequence stays, addresses and details go; the last record says what happened.
      const activityAfter = await store.activity.list(owner.user.id, { before: 0, limit: 100 });
      assert.equal(activityAfter.length, activityBefore.length + 1);
      assert.equal(activityAfter[0]?.action, 'account.deleted');
      for (const a of activityAfter) {
        assert.equal(a.ip, null);
        assert.deepEqual(a.detail, {});
      }
      for (const was of activityBefore) {
        const now = activityAfter.find((a) => a.seq === was.seq);
        assert.deepEqual(now && { action: now.action, createdAt: now.createdAt, agentId: now.agentId, site: now.site }, { action: was.action, createdAt: was.createdAt, agentId: was.agentId, site: was.site });
      }

      // Never again: password, passkey, session.
      expectStatus(await login(owner.email, owner.password), 401);
      const passkeyOpts = await t.app.inject({ url: `/api/webauthn/login/options?email=${encodeURIComponent(owner.email)}`, remoteAddress: remoteAddress() });
      expectStatus(passkeyOpts, 200);
      const { challenge, options } = json<{ challenge: string; options: { challenge: string } }>(passkeyOpts);
      const signIn = await t.app.inject({ method: 'POST', url: '/api/webauthn/login/verify', remoteAddress: remoteAddress(), payload: { challenge, assertion: owner.authenticator.assert(options) } });
      assert.ok(signIn.statusCode >= 400 && signIn.statusCode < 500, `passkey sign-in: ${signIn.statusCode} ${signIn.body}`);
      expectStatus(await me(owner.auth), 401);

      // The other owner: untouched.
      expectStatus(await me(other.owner.auth), 200);
      assert.equal((await verify(t, await verifyBody(t, other.agent, other.pass))).valid, true);
      assert.equal((await store.passkeys.listForUser(other.owner.user.id)).length, 1);
      assert.equal((await store.pushDevices.listForUser(other.owner.user.id)).length, 1);
      assert.equal((await store.receipts.listForUser(other.owner.user.id)).length, 1);
      assert.ok(await store.notifySettings.get(other.owner.user.id));
      assert.equal((await store.authzRequests.listPendingForUser(other.owner.user.id, t.clock.now())).length, 1);
      assert.ok((await store.activity.list(other.owner.user.id, { before: 0, limit: 100 })).some((a) => a.ip !== null));
      assert.equal((await store.users.byId(other.owner.user.id))?.email, other.owner.email);
    });

    it('the same email signs up again as a new account with nothing of the old one', async () => {
      const { owner } = await richOwner();
      expectStatus(await del(owner.auth, { confirm: owner.email, password: owner.password }), 200);
      const again = await signUp(t.app, owner.email, 'a new password 123');
      assert.notEqual(again.user.id, owner.user.id);
      const body = json<{ email: string; pending: unknown[]; grants: unknown[]; unread_notifications: number; email_verified: boolean }>(await me(again.auth));
      assert.equal(body.email, owner.email);
      assert.deepEqual([body.pending, body.grants, body.unread_notifications, body.email_verified], [[], [], 0, false]);
      assert.deepEqual(json(await t.app.inject({ url: '/api/agents', headers: again.auth })), []);
      const agents = await t.services.store.agents.listForUser(again.user.id, true);
      assert.deepEqual(agents, []);
      assert.deepEqual(await t.services.store.passkeys.listForUser(again.user.id), []);
      const trail = await t.services.store.activity.list(again.user.id, { before: 0, limit: 100 });
      assert.ok(trail.every((a) => a.userId === again.user.id));
      expectStatus(await login(owner.email, owner.password), 401);
      expectStatus(await login(owner.email, 'a new password 123'), 200);
    });

    it('a failure in the middle rolls everything back', async () => {
      const { store } = t.services;
      const { owner, agent, pass } = await richOwner();
      t.services.accountDeletion.addStep({
        name: `test-failure-${owner.user.id}`,
        run: async (c) => {
          if (c.user.id === owner.user.id) throw new Error('a step failed');
        },
      });
      const seqBefore = await store.counters.current('rev_seq');
      const session = await t.services.accounts.session(owner.session_token);
      assert.ok(session);
      await assert.rejects(t.services.accountDeletion.delete(session, { confirm: owner.email, password: owner.password }, remoteAddress()), /a step failed/);
      assert.equal(await store.counters.current('rev_seq'), seqBefore);
      assert.equal((await store.agents.byId(agent.id))?.status, 'active');
      assert.equal((await store.grants.listActiveForUser(owner.user.id)).length, 1);
      assert.equal((await store.authzRequests.listPendingForUser(owner.user.id, t.clock.now())).length, 1);
      assert.equal((await store.passkeys.listForUser(owner.user.id)).length, 1);
      assert.equal((await store.pushDevices.listForUser(owner.user.id)).length, 1);
      assert.equal((await store.users.byId(owner.user.id))?.email, owner.email);
      assert.ok((await store.activity.list(owner.user.id, { before: 0, limit: 100 })).some((a) => a.ip !== null));
      assert.equal((await verify(t, await verifyBody(t, agent, pass))).valid, true);
      expectStatus(await me(owner.auth), 200);
    });

    it('erasure steps: one per concept, profile last; a new step goes before it; a name twice is refused', () => {
      const names = t.services.accountDeletion.stepNames();
      assert.equal(names.at(-1), 'profile');
      for (const n of ['agents', 'grants', 'requests', 'oidc-sign-ins', 'sessions', 'passkeys', 'devices', 'email-links', 'notify-settings', 'notifications', 'outbox', 'receipts', 'activity']) assert.ok(names.includes(n), n);
      assert.ok(names.indexOf('agents') < names.indexOf('outbox'), 'the pushes the agent hooks queue are deleted after them');
      assert.throws(() => t.services.accountDeletion.addStep({ name: 'agents', run: async () => {} }), /twice/);
    });
  });
}
