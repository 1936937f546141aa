import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { createAgentJwt, jwkThumbprint } from '@mandate/protocol';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { approve, ownerWithPasskey, respond, type Owner } from './helpers/approvals.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { verifyEmail } from './helpers/email-links.ts';
import { freePort } from './helpers/server-process.ts';
import { FixedClock, seconds } from '../src/clock.ts';
import { TOKEN_LIMITS } from '../src/domain/oidc/deps.ts';
import { QUOTAS } from '../src/domain/quotas.ts';

// The rest of the OIDC provider (decisions §12, §18), with openid-client v6 as the relying party
// against the app on a real port: CIBA in poll mode (with slow_down, handled by openid-client
// itself), DPoP-bound tokens (RFC 9449: cnf.jkt, dpop_jkt, bound refresh), the email claim under
// the owner's approval, back-channel logout on every way a sign-in breaks, and rate limits.
// The service's clock is fixed and moved by the test; it is kept near real time, because
// openid-client judges ID tokens and DPoP proofs by the real clock.

interface Rp {
  clientId: string;
  secret: string;
  redirectUri: string;
  config: oidc.Configuration;
}

type OAuthBody = { error?: string; error_description?: string };

function suite(backend: 'sqlite' | 'postgres'): void {
  describe(`OIDC provider: CIBA, DPoP, email, logout, limits (${backend})`, () => {
    let t: TestApp;
    let base: string;
    let port: number;
    let owner: Owner;
    let agent: TestAgent;
    let rp: Rp;
    let siteOwner: Awaited<ReturnType<typeof signUp>>;
    const site = () => `127.0.0.1:${port}`;

    const agentHeader = (htu: string, who: TestAgent = agent) =>
      createAgentJwt(who.privateKey, who.id, { iat: seconds(t.clock.now()), lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu });

    const register = async (redirectUri: string, extra: Record<string, unknown> = {}) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: siteOwner.auth, payload: { name: 'Shop', redirect_uris: [redirectUri], ...extra } });
      expectStatus(res, 200);
      return json<{ client_id: string; client_secret?: string }>(res);
    };

    const newRp = async (path: string, extra: Record<string, unknown> = {}): Promise<Rp> => {
      const redirectUri = `http://127.0.0.1:${port}${path}`;
      const c = await register(redirectUri, extra);
      const secret = c.client_secret ?? '';
      const config = await oidc.discovery(new URL(base), c.client_id, { redirect_uris: [redirectUri], [oidc.clockTolerance]: 120 }, c.client_secret ? oidc.ClientSecretBasic(secret) : oidc.None(), { execute: [oidc.allowInsecureRequests] });
      return { clientId: c.client_id, secret, redirectUri, config };
    };

    /** The agent's authorize call (the RP builds the URL, the agent sends it with its header). */
    const start = async (r: Rp, o: { scope?: string; params?: Record<string, string>; who?: TestAgent } = {}) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(r.config, { redirect_uri: r.redirectUri, scope: o.scope ?? 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, ...o.params });
      const res = await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': await agentHeader(url.href, o.who) } });
      assert.equal(res.status, 302, await res.text());
      return { location: res.headers.get('location') ?? '', verifier, state };
    };

    const redeem = (r: Rp, s: { location: string; verifier: string; state: string }, options?: oidc.DPoPOptions) =>
      oidc.authorizationCodeGrant(r.config, new URL(s.location), { pkceCodeVerifier: s.verifier, expectedState: s.state, idTokenExpected: true }, undefined, options);

    const basic = (r: Rp) => `Basic ${Buffer.from(`${encodeURIComponent(r.clientId)}:${encodeURIComponent(r.secret)}`).toString('base64')}`;
    const post = async (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });
      return { status: res.status, body: (await res.json()) as OAuthBody & Record<string, unknown>, headers: res.headers };
    };
    const poll = (r: Rp, authReqId: string) => post('/oidc/token', { grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: authReqId }, { authorization: basic(r) });

    const pendingOf = async () => json<{ pending: Array<{ id: string; kind: string; agent_id: string; user_info: string[]; sign_in?: Record<string, unknown> }> }>(await t.app.inject({ url: '/api/me', headers: owner.auth })).pending;

    /** A first sign-in under a grant: what the site learns of the agent (its act.sub). */
    const signedIn = async (r: Rp, who: TestAgent = agent) => {
      const tokens = await redeem(r, await start(r, { who }));
      const claims = tokens.claims();
      assert.ok(claims);
      return { tokens, claims, actSub: (claims.act as { sub: string }).sub };
    };

    const logoutsFor = async (sid: string) => (await t.services.store.outbox.list({ kind: 'logout', limit: 1000 })).filter((m) => (m.payload as { sid?: string }).sid === sid);

    before(async () => {
      port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await testApp({ backend, env: { BASE_URL: base, OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
      await t.app.listen({ port, host: '127.0.0.1' });
      owner = await ownerWithPasskey(t, new SoftAuthenticator({ origin: base }));
      agent = await createAgent(t, owner, 'Shopper');
      siteOwner = await signUp(t.app);
      rp = await newRp('/cb', { backchannel_logout_uri: `http://127.0.0.1:${port}/backchannel-logout` });
      await createGrant(t, agent, { site: site(), scopes: ['openid', 'profile'] });
    });
    after(() => t.close());

    describe('DPoP binding', () => {
      it('a proof at the token endpoint binds the access token (cnf.jkt, token_type DPoP); userinfo wants DPoP, refresh wants the same key', async () => {
        t.clock.set(Date.now());
        const keyPair = await oidc.randomDPoPKeyPair('ES256');
        const jkt = await jwkThumbprint(await exportJWK(keyPair.publicKey));
        const dpop = oidc.getDPoPHandle(rp.config, keyPair);
        const tokens = await redeem(rp, await start(rp), { DPoP: dpop });
        assert.equal(tokens.token_type.toLowerCase(), 'dpop');
        assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });
        const sub = tokens.claims()?.sub ?? '';
        const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, sub, { DPoP: dpop });
        assert.equal(info.sub, sub);
        // As a Bearer token it is refused: a stolen bound token is useless without the key.
        const bearer = await fetch(`${base}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(bearer.status, 401);
        const noProof = await fetch(`${base}/oidc/userinfo`, { headers: { authorization: `DPoP ${tokens.access_token}` } });
        assert.equal(noProof.status, 401);
        assert.match(noProof.headers.get('www-authenticate') ?? '', /^DPoP /);
        // Introspection shows the binding.
        const seen = await post('/oidc/introspect', { token: tokens.access_token }, { authorization: basic(rp) });
        assert.equal(seen.body.active, true);
        assert.deepEqual(seen.body.cnf, { jkt });
        // Refresh: with the key, a new bound token; without a proof, or with another key, refused.
        const refreshed = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token ?? '', undefined, { DPoP: dpop });
        assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
        assert.deepEqual(decodeJwt(refreshed.access_token).cnf, { jkt });
        const bare = await post('/oidc/token', { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token ?? '' }, { authorization: basic(rp) });
        assert.deepEqual([bare.status, bare.body.error], [400, 'invalid_grant']);
        const otherKey = oidc.getDPoPHandle(rp.config, await oidc.randomDPoPKeyPair('ES256'));
        await assert.rejects(oidc.refreshTokenGrant(rp.config, refreshed.refresh_token ?? '', undefined, { DPoP: otherKey }), (e: { error?: string }) => e.error === 'invalid_grant');
        // The refused attempts did not spend the token: the right key still refreshes.
        const third = await oidc.refreshTokenGrant(rp.config, refreshed.refresh_token ?? '', undefined, { DPoP: dpop });
        assert.ok(third.access_token);
      });

      it('dpop_jkt at authorize binds the code: redeemed only with a proof of that key', async () => {
        t.clock.set(Date.now());
        const keyPair = await oidc.randomDPoPKeyPair('ES256');
        const jkt = await jwkThumbprint(await exportJWK(keyPair.publicKey));
        const s1 = await start(rp, { params: { dpop_jkt: jkt } });
        await assert.rejects(redeem(rp, s1), (e: { error?: string }) => e.error === 'invalid_grant');
        const s2 = await start(rp, { params: { dpop_jkt: jkt } });
        await assert.rejects(redeem(rp, s2, { DPoP: oidc.getDPoPHandle(rp.config, await oidc.randomDPoPKeyPair('ES256')) }), (e: { error?: string }) => e.error === 'invalid_grant');
        const s3 = await start(rp, { params: { dpop_jkt: jkt } });
        const tokens = await redeem(rp, s3, { DPoP: oidc.getDPoPHandle(rp.config, keyPair) });
        assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });
        const bad = await start(rp, { params: { dpop_jkt: 'not-a-thumbprint' } });
        assert.equal(new URL(bad.location).searchParams.get('error'), 'invalid_request');
      });

      it('refuses a proof that is replayed, for another endpoint or method, stale, or not a proof', async () => {
        t.clock.set(Date.now());
        const { privateKey, publicKey } = await generateKeyPair('ES256');
        const jwk = await exportJWK(publicKey);
        const proof = (claims: Record<string, unknown>, typ = 'dpop+jwt') =>
          new SignJWT({ jti: randomBytes(12).toString('base64url'), htm: 'POST', htu: `${base}/oidc/token`, iat: seconds(t.clock.now()), ...claims }).setProtectedHeader({ alg: 'ES256', typ, jwk }).sign(privateKey);
        const tokenWith = async (dpop: string) => {
          const s = await start(rp);
          return post('/oidc/token', { grant_type: 'authorization_code', code: new URL(s.location).searchParams.get('code') ?? '', redirect_uri: rp.redirectUri, code_verifier: s.verifier }, { authorization: basic(rp), dpop });
        };
        const once = await proof({});
        assert.equal((await tokenWith(once)).status, 200);
        const replay = await tokenWith(once);
        assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_dpop_proof']);
        for (const bad of [await proof({ htu: `${base}/oidc/userinfo` }), await proof({ htm: 'GET' }), await proof({ iat: seconds(t.clock.now()) - 600 }), await proof({}, 'JWT'), 'garbage', 'a.b.c']) {
          const res = await tokenWith(bad);
          assert.deepEqual([res.status, res.body.error], [400, 'invalid_dpop_proof'], bad.slice(0, 20));
        }
      });
    });

    describe('email under the owner\'s approval', () => {
      it('scope email: nothing while the address is unverified; once verified the owner is asked and the ID token and userinfo carry it (email_verified true); a new address gives email_verified false until it is verified; narrowing the grant takes it away at the next refresh', async () => {
        t.clock.set(Date.now());
        // Unverified (decisions §25): the scope is not requestable, so the card asks nothing about the email and nothing is released.
        const early = await createAgent(t, owner, 'Early');
        const s0 = await start(rp, { scope: 'openid email', who: early });
        const wait0 = new URL(s0.location);
        const txn0 = wait0.pathname.split('/')[4] ?? '';
        assert.deepEqual((await pendingOf()).find((p) => p.id === txn0)?.user_info, []);
        expectStatus(await approve(t, owner, txn0), 200);
        const status0 = await (await fetch(`${base}/oidc/authorize/wait/${txn0}/status${wait0.search}`)).json() as { redirect: string };
        const tokens0 = await redeem(rp, { ...s0, location: status0.redirect });
        assert.equal(tokens0.scope, 'openid');
        assert.equal(tokens0.claims()?.email, undefined);
        assert.equal(tokens0.claims()?.email_verified, undefined);

        await verifyEmail(t, owner);
        const mailer = await createAgent(t, owner, 'Mailer');
        const s = await start(rp, { scope: 'openid email phone', who: mailer });
        const wait = new URL(s.location);
        const txn = wait.pathname.split('/')[4] ?? '';
        const card = (await pendingOf()).find((p) => p.id === txn);
        assert.ok(card);
        assert.deepEqual(card.user_info, ['user:email'], 'phone is not asked: the owner has no verified phone');
        assert.deepEqual(card.sign_in, { client_id: rp.clientId, client_name: 'Shop', verified: false, flow: 'authorize', binding_message: null });
        expectStatus(await approve(t, owner, txn), 200);
        const status = await (await fetch(`${base}/oidc/authorize/wait/${txn}/status${wait.search}`)).json() as { redirect: string };
        const tokens = await redeem(rp, { ...s, location: status.redirect });
        const email = (await t.services.store.users.byId(owner.user.id))?.email;
        assert.equal(tokens.claims()?.email, email);
        assert.equal(tokens.claims()?.email_verified, true);
        assert.equal(tokens.scope, 'openid email');
        assert.equal(tokens.claims()?.phone_number, undefined);
        const sub = tokens.claims()?.sub ?? '';
        const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, sub);
        assert.equal(info.email, email);
        assert.equal(info.email_verified, true);

        // A new address starts over: the sign-in keeps its scope, but the address is not released until verified.
        const moved = `moved-${randomBytes(4).toString('hex')}@example.com`;
        expectStatus(await t.app.inject({ method: 'PATCH', url: '/api/me', headers: owner.auth, payload: { email: moved, current_password: owner.password } }), 200);
        const unverified = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token ?? '');
        assert.equal(unverified.scope, 'openid email');
        assert.equal(unverified.claims()?.email, undefined);
        assert.equal(unverified.claims()?.email_verified, false);
        const info2 = await oidc.fetchUserInfo(rp.config, unverified.access_token, sub);
        assert.deepEqual([info2.email, info2.email_verified], [undefined, false]);
        await verifyEmail(t, owner);
        const reverified = await oidc.refreshTokenGrant(rp.config, unverified.refresh_token ?? '');
        assert.deepEqual([reverified.claims()?.email, reverified.claims()?.email_verified], [moved, true]);

        const grant = (await t.services.store.grants.listForAgent(mailer.id)).find((g) => g.status === 'active');
        assert.ok(grant);
        expectStatus(await t.app.inject({ method: 'PATCH', url: `/api/grants/${grant.id}/user-info`, headers: owner.auth, payload: { user_info: [] } }), 200);
        const after = await oidc.refreshTokenGrant(rp.config, reverified.refresh_token ?? '');
        assert.equal(after.claims()?.email, undefined);
        assert.equal(after.scope, 'openid');
      });
    });

    describe('phone under the owner\'s approval', () => {
      it('scope phone: released only while the phone is verified (phone_number_verified true); after DELETE /api/phone, userinfo and the next ID token carry none', async () => {
        t.clock.set(Date.now());
        const phone = '+12015550177';
        expectStatus(await t.app.inject({ method: 'POST', url: '/api/phone/send', headers: owner.auth, payload: { phone } }), 200);
        // No SMS_PROVIDER here: the text is in the outbox (and the log), as in development.
        const [sms] = await t.services.store.outbox.list({ userId: owner.user.id, kind: 'phone_code' });
        const code = /(\d{6})/.exec(String(sms?.payload.text))?.[1] ?? '';
        expectStatus(await t.app.inject({ method: 'POST', url: '/api/phone/verify', headers: owner.auth, payload: { phone, code } }), 200);
        const caller = await createAgent(t, owner, 'Caller');
        const s = await start(rp, { scope: 'openid phone', who: caller });
        const wait = new URL(s.location);
        const txn = wait.pathname.split('/')[4] ?? '';
        const pending = json<{ pending: { id: string; user_info: string[] }[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth })).pending;
        assert.deepEqual(pending.find((p) => p.id === txn)?.user_info, ['user:phone']);
        expectStatus(await approve(t, owner, txn), 200);
        const status = await (await fetch(`${base}/oidc/authorize/wait/${txn}/status${wait.search}`)).json() as { redirect: string };
        const tokens = await redeem(rp, { ...s, location: status.redirect });
        assert.equal(tokens.scope, 'openid phone');
        assert.deepEqual([tokens.claims()?.phone_number, tokens.claims()?.phone_number_verified], [phone, true]);
        const sub = tokens.claims()?.sub ?? '';
        assert.equal((await oidc.fetchUserInfo(rp.config, tokens.access_token, sub)).phone_number, phone);

        expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/phone', headers: owner.auth }), 200);
        const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, sub);
        assert.deepEqual([info.phone_number, info.phone_number_verified], [undefined, undefined], 'userinfo: gone at once');
        const next = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token ?? '');
        assert.deepEqual([next.claims()?.phone_number, next.claims()?.phone_number_verified], [undefined, undefined], 'the next ID token carries no phone');
      });
    });

    describe('CIBA', () => {
      it('bc-authorize → authorization_pending, slow_down (+5 s each), the owner sees the binding message as written, then the tokens once', async () => {
        t.clock.set(Date.now());
        const first = await signedIn(rp);
        const message = 'Order #42 <b>"total"</b> — 12 €';
        const answer = await oidc.initiateBackchannelAuthentication(rp.config, { scope: 'openid profile', login_hint: first.actSub, binding_message: message });
        assert.equal(answer.expires_in, 300);
        assert.equal(answer.interval, 5);
        const card = (await pendingOf()).find((p) => p.sign_in?.flow === 'ciba');
        assert.ok(card, 'the owner has a card');
        assert.equal(card.agent_id, agent.id);
        assert.deepEqual(card.sign_in, { client_id: rp.clientId, client_name: 'Shop', verified: false, flow: 'ciba', binding_message: message });
        const inbox = json<{ items: Array<{ body: string; txn_id?: string }> }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
        assert.ok(inbox.items.some((n) => n.body.includes(message)), 'the lock screen shows the message as written');

        const p1 = await poll(rp, answer.auth_req_id);
        assert.deepEqual([p1.status, p1.body.error], [400, 'authorization_pending'], 'the first poll, however soon, is never slow_down');
        const p2 = await poll(rp, answer.auth_req_id);
        assert.equal(p2.body.error, 'slow_down');
        t.clock.advance(9_000);
        assert.equal((await poll(rp, answer.auth_req_id)).body.error, 'slow_down', '9 s is faster than the 10 s interval now');
        t.clock.advance(15_000);
        assert.equal((await poll(rp, answer.auth_req_id)).body.error, 'authorization_pending');

        expectStatus(await approve(t, owner, card.id), 200);
        t.clock.advance(15_000);
        const tokens = await oidc.pollBackchannelAuthenticationGrant(rp.config, { ...answer, interval: 0.01 });
        const claims = tokens.claims();
        assert.ok(claims);
        assert.equal(claims.sub, first.claims.sub, 'the same person at the same site');
        assert.equal((claims.act as { sub: string }).sub, first.actSub);
        assert.deepEqual(claims.amr, ['agent', 'passkey']);
        t.clock.advance(30_000);
        const again = await poll(rp, answer.auth_req_id);
        assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant'], 'the tokens are issued once');
      });

      it('openid-client keeps to slow_down by itself', async () => {
        t.clock.set(Date.now());
        const { actSub } = await signedIn(rp);
        const answer = await oidc.initiateBackchannelAuthentication(rp.config, { scope: 'openid', login_hint: actSub });
        assert.equal((await poll(rp, answer.auth_req_id)).body.error, 'authorization_pending');
        const card = (await pendingOf()).find((p) => p.sign_in?.flow === 'ciba');
        assert.ok(card);
        expectStatus(await approve(t, owner, card.id), 200);
        // openid-client polls at once (interval 0.01 s), gets slow_down, waits 5 s more and polls again;
        // meanwhile the service's clock moves past the interval.
        const timer = setTimeout(() => t.clock.advance(10_000), 1_000);
        const started = Date.now();
        const tokens = await oidc.pollBackchannelAuthenticationGrant(rp.config, { ...answer, interval: 0.01 });
        clearTimeout(timer);
        assert.ok(Date.now() - started >= 4_900, 'openid-client waited after slow_down');
        assert.ok(tokens.access_token);
      });

      it('denied → access_denied; unanswered → expired_token; requested_expiry is capped at 600 s and raised to at least 60 s', async () => {
        t.clock.set(Date.now());
        const { actSub } = await signedIn(rp);
        const long = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub, requested_expiry: '5000' }, { authorization: basic(rp) });
        assert.equal(long.status, 200);
        assert.equal(long.body.expires_in, 600);
        const busy = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub }, { authorization: basic(rp) });
        assert.deepEqual([busy.status, busy.body.error], [400, 'invalid_request'], 'one request of an agent at a site waits at a time');
        const card = (await pendingOf()).find((p) => p.sign_in?.flow === 'ciba');
        assert.ok(card);
        expectStatus(await respond(t, owner, card.id, { approve: false }), 200);
        const denied = await poll(rp, String(long.body.auth_req_id));
        assert.equal(denied.body.error, 'access_denied');

        // A second's expiry would let a site refile an unanswered card every second: raised to 60 s.
        const short = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub, requested_expiry: '1' }, { authorization: basic(rp) });
        assert.equal(short.body.expires_in, 60);
        t.clock.advance(2_000);
        assert.equal((await poll(rp, String(short.body.auth_req_id))).body.error, 'authorization_pending', 'still waiting after 2 s');
        const refiled = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub, requested_expiry: '1' }, { authorization: basic(rp) });
        assert.deepEqual([refiled.status, refiled.body.error], [400, 'invalid_request'], 'not refiled while the first waits');
        t.clock.advance(59_000);
        assert.equal((await poll(rp, String(short.body.auth_req_id))).body.error, 'expired_token');
        await t.services.store.authzRequests.expireStale(t.clock.now());
      });

      it('refuses an unknown login_hint, a public client, a bad binding message, a scope without openid, and another client\'s auth_req_id', async () => {
        t.clock.set(Date.now());
        const { actSub } = await signedIn(rp);
        const auth = { authorization: basic(rp) };
        const cases: Array<[Record<string, string>, string]> = [
          [{ scope: 'openid', login_hint: 'nobody-known' }, 'unknown_user_id'],
          [{ scope: 'openid', login_hint: agent.id }, 'unknown_user_id'],
          [{ scope: 'openid' }, 'invalid_request'],
          [{ scope: 'openid', login_hint: actSub, binding_message: 'x'.repeat(101) }, 'invalid_binding_message'],
          [{ scope: 'openid', login_hint: actSub, binding_message: 'line\nbreak' }, 'invalid_binding_message'],
          [{ scope: 'profile', login_hint: actSub }, 'invalid_scope'],
          [{ scope: 'openid', login_hint: actSub, requested_expiry: '-5' }, 'invalid_request'],
          [{ scope: 'openid', login_hint: actSub, id_token_hint: 'x' }, 'invalid_request'],
        ];
        for (const [form, error] of cases) {
          const res = await post('/oidc/bc-authorize', form, auth);
          assert.deepEqual([res.status, res.body.error], [400, error], JSON.stringify(form));
        }
        const noAuth = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub });
        assert.deepEqual([noAuth.status, noAuth.body.error], [401, 'invalid_client']);
        const pub = await register(`http://127.0.0.1:${port}/pub`, { public: true });
        const asPublic = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub, client_id: pub.client_id });
        assert.deepEqual([asPublic.status, asPublic.body.error], [400, 'unauthorized_client']);
        // Another client on the same host computes the same act.sub, but was never given it: unknown
        // there (issue 22), until the agent signs in there itself.
        const other = await newRp('/other-cb');
        const notGiven = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub }, { authorization: basic(other) });
        assert.deepEqual([notGiven.status, notGiven.body.error], [400, 'unknown_user_id'], 'same host, not given: unknown');
        assert.equal((await signedIn(other)).actSub, actSub, 'same host: the same act.sub');
        const elsewhere = await post('/oidc/bc-authorize', { scope: 'openid', login_hint: actSub }, { authorization: basic(other) });
        assert.equal(elsewhere.status, 200, 'given by its own sign-in: known');
        const stolen = await poll(rp, String(elsewhere.body.auth_req_id));
        assert.deepEqual([stolen.status, stolen.body.error], [400, 'invalid_grant'], 'an auth_req_id works only for its client');
        const junk = await poll(rp, 'not-an-id');
        assert.equal(junk.body.error, 'invalid_grant');
      });
    });

    describe('CIBA: who may ask (issue 22)', () => {
      const inboxCount = async () => json<{ items: unknown[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth })).items.length;
      const ask = (r: Rp, form: Record<string, string>) => post('/oidc/bc-authorize', { scope: 'openid', ...form }, { authorization: basic(r) });
      /** What the owner sees: open cards and inbox notifications. */
      const ownerSees = async () => ({ cards: (await pendingOf()).length, inbox: await inboxCount() });
      const nextHour = () => Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 1_000;
      const newAgent = async (name: string, grant: { expiresAt?: number; scopes?: string[] } = {}) => {
        const a = await createAgent(t, owner, name);
        await createGrant(t, a, { site: site(), scopes: grant.scopes ?? ['openid', 'profile'], ...(grant.expiresAt !== undefined ? { expiresAt: grant.expiresAt } : {}) });
        return a;
      };

      it('another account\'s client on the same host, named like the real one, gets unknown_user_id for the real act.sub, as for one never issued, and nothing reaches the owner', async () => {
        t.clock.set(Date.now());
        const { actSub } = await signedIn(rp);
        const attacker = await signUp(t.app);
        const evil = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: attacker.auth, payload: { name: 'Shop', redirect_uris: [`http://127.0.0.1:${port}/evil-cb`] } });
        expectStatus(evil, 200);
        const e = json<{ client_id: string; client_secret: string }>(evil);
        const evilRp = { clientId: e.client_id, secret: e.client_secret } as Rp;
        const before = await ownerSees();
        const res = await ask(evilRp, { login_hint: actSub, binding_message: 'Confirm your order', requested_expiry: '1' });
        const never = await ask(evilRp, { login_hint: 'never-issued' });
        assert.deepEqual([res.status, res.body.error], [400, 'unknown_user_id']);
        assert.equal(res.body.error_description, never.body.error_description, 'the same answer as a value never issued: nothing tells it exists elsewhere');
        assert.deepEqual(await ownerSees(), before, 'no card, no notification');
      });

      it('no live grant with openid at the site: access_denied before anything is filed', async () => {
        t.clock.set(Date.now());
        const lapsed = await newAgent('Lapsed', { expiresAt: t.clock.now() + 120_000 });
        const { actSub } = await signedIn(rp, lapsed);
        t.clock.advance(121_000);
        const before = await ownerSees();
        const expired = await ask(rp, { login_hint: actSub });
        assert.deepEqual([expired.status, expired.body.error], [400, 'access_denied']);
        assert.match(String(expired.body.error_description), /no longer allows this agent to sign in/);
        await createGrant(t, lapsed, { site: site(), scopes: ['orders:read'] });
        const withoutOpenid = await ask(rp, { login_hint: actSub });
        assert.deepEqual([withoutOpenid.status, withoutOpenid.body.error], [400, 'access_denied'], 'a live grant without openid does not let the site ask');
        assert.deepEqual(await ownerSees(), before, 'no card, no notification');
      });

      it('revoking the grant forgets the subject (unknown_user_id), a new sign-in brings it back, removing the agent forgets it again', async () => {
        t.clock.set(Date.now());
        const gone = await newAgent('Gone');
        const { actSub } = await signedIn(rp, gone);
        const grant = (await t.services.store.grants.listForAgent(gone.id)).find((g) => g.status === 'active');
        assert.ok(grant);
        expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke`, headers: owner.auth }), 200);
        assert.equal(await t.services.store.oidcSubjects.find(rp.clientId, actSub), undefined, 'forgotten with the revocation');
        const before = await ownerSees();
        const after = await ask(rp, { login_hint: actSub });
        assert.deepEqual([after.status, after.body.error], [400, 'unknown_user_id']);
        assert.deepEqual(await ownerSees(), before);

        await createGrant(t, gone, { site: site(), scopes: ['openid', 'profile'] });
        assert.equal((await signedIn(rp, gone)).actSub, actSub);
        const again = await ask(rp, { login_hint: actSub });
        assert.equal(again.status, 200, 'known again after a new sign-in');
        expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${gone.id}`, headers: owner.auth }), 200);
        assert.equal(await t.services.store.oidcSubjects.find(rp.clientId, actSub), undefined, 'forgotten with the agent');
        assert.equal((await ask(rp, { login_hint: actSub })).body.error, 'unknown_user_id');
      });

      it(`quotas: ${QUOTAS.cibaRequestsPerAgentPerClientPerHour} requests per agent per client per hour, then 429 rate_limited (quota ciba_requests_per_hour, Retry-After) and nothing filed; another client keeps its own budget`, async () => {
        t.clock.set(Date.now());
        const pushed = await newAgent('Pushed');
        const quotaRp = await newRp('/quota-cb');
        const { actSub } = await signedIn(quotaRp, pushed);
        await signedIn(rp, pushed);
        t.clock.set(nextHour()); // the hourly windows are fixed: the whole test inside one
        for (let i = 0; i < QUOTAS.cibaRequestsPerAgentPerClientPerHour; i++) {
          const res = await ask(quotaRp, { login_hint: actSub, requested_expiry: '1' });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          const card = (await pendingOf()).find((p) => p.agent_id === pushed.id);
          assert.ok(card);
          expectStatus(await respond(t, owner, card.id, { approve: false }), 200);
        }
        const before = await ownerSees();
        const over = await ask(quotaRp, { login_hint: actSub, requested_expiry: '1' });
        assert.deepEqual([over.status, over.body.error, over.body.quota], [429, 'rate_limited', 'ciba_requests_per_hour']);
        assert.ok(Number(over.headers.get('retry-after')) > 0);
        assert.equal(over.body.retry_after, Number(over.headers.get('retry-after')));
        assert.deepEqual(await ownerSees(), before, 'no card, no notification');
        const otherClient = await ask(rp, { login_hint: actSub });
        assert.equal(otherClient.status, 200, 'the budget is per agent and client');
      });

      it(`quotas: ${QUOTAS.cibaRequestsPerOwnerPerHour} requests per owner per hour from all sites together`, async () => {
        t.clock.set(nextHour() + 3_600_000); // a window of its own
        const many = await ownerWithPasskey(t, new SoftAuthenticator({ origin: base }));
        const perAgent = QUOTAS.cibaRequestsPerAgentPerClientPerHour;
        let filed = 0;
        let last: Awaited<ReturnType<typeof ask>> | undefined;
        for (let a = 0; last === undefined || last.status === 200; a++) {
          const ag = await createAgent(t, many, `Many ${a}`);
          await createGrant(t, ag, { site: site(), scopes: ['openid'] });
          // As a sign-in at rp would have left it (the sign-ins themselves are tested above).
          const hint = `many-${a}-${ag.id}`;
          await t.services.store.oidcSubjects.remember(rp.clientId, site(), hint, ag.id, t.clock.now());
          t.clock.advance(61_000); // past the client's per-minute limit
          for (let i = 0; i < perAgent; i++) {
            last = await ask(rp, { login_hint: hint });
            if (last.status !== 200) break;
            filed++;
            const card = json<{ pending: Array<{ id: string; agent_id: string }> }>(await t.app.inject({ url: '/api/me', headers: many.auth })).pending.find((p) => p.agent_id === ag.id);
            assert.ok(card);
            expectStatus(await respond(t, many, card.id, { approve: false }), 200);
          }
        }
        assert.equal(filed, QUOTAS.cibaRequestsPerOwnerPerHour, 'refused at the first request past the quota');
        assert.deepEqual([last?.status, last?.body.error, last?.body.quota], [429, 'rate_limited', 'ciba_requests_per_hour']);
      });

      it('format characters: binding_message with a bidi override or zero-width space → invalid_binding_message naming it; emoji sequences pass; client names with them → 400 naming name', async () => {
        t.clock.set(Date.now());
        const fine = await newAgent('Fine');
        const { actSub } = await signedIn(rp, fine);
        for (const bad of ['Pay \u202E01 €', 'Pay\u200B10 €', '\u2066Shop\u2069', 'x\uFEFF']) {
          const res = await ask(rp, { login_hint: actSub, binding_message: bad });
          assert.deepEqual([res.status, res.body.error], [400, 'invalid_binding_message'], JSON.stringify(bad));
          assert.match(String(res.body.error_description), /^binding_message contains an invisible or control character .*\(U\+[0-9A-F]{4} at character \d+\)$/);
        }
        assert.equal((await pendingOf()).filter((p) => p.agent_id === fine.id).length, 0);
        const emoji = await ask(rp, { login_hint: actSub, binding_message: 'Order for 👩\u200D💻 and 👨\u200D👩\u200D👧 ❤️' });
        assert.equal(emoji.status, 200, JSON.stringify(emoji.body));
        for (const name of ['Shop\u202E', 'Sh\u200Bop']) {
          const res = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: siteOwner.auth, payload: { name, redirect_uris: [`http://127.0.0.1:${port}/n`] } });
          expectStatus(res, 400);
          assert.match(json<{ detail: string }>(res).detail, /^name contains an invisible or control character/);
        }
        const patched = await t.app.inject({ method: 'PATCH', url: `/api/oidc/clients/${rp.clientId}`, headers: siteOwner.auth, payload: { name: 'Shop\u2067' } });
        expectStatus(patched, 400);
        assert.match(json<{ detail: string }>(patched).detail, /^name contains an invisible or control character/);
        const ok = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: siteOwner.auth, payload: { name: 'Shop 👩\u200D💻', redirect_uris: [`http://127.0.0.1:${port}/n`] } });
        expectStatus(ok, 200);
      });
    });

    describe('ending sign-ins', () => {
      it('a replayed code, a reused refresh token and a revoked grant each end the sign-in and queue a back-channel logout; a later approval at the site does not', async () => {
        t.clock.set(Date.now());
        const s = await start(rp);
        const tokens = await redeem(rp, s);
        const sid = String(tokens.claims()?.sid);
        // A new approval at the same site supersedes the grant: the sign-in goes on under the new one.
        await t.services.store.grants.supersede(agent.id, site(), t.clock.now());
        await createGrant(t, agent, { site: site(), scopes: ['openid', 'profile'] });
        const next = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token ?? '');
        assert.equal((await logoutsFor(sid)).length, 0);
        // The old refresh token again: the sign-in ends, and the site is told.
        const reuse = await post('/oidc/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' }, { authorization: basic(rp) });
        assert.equal(reuse.body.error, 'invalid_grant');
        assert.equal((await logoutsFor(sid)).length, 1);
        await assert.rejects(oidc.refreshTokenGrant(rp.config, next.refresh_token ?? ''));

        const s2 = await start(rp);
        const t2 = await redeem(rp, s2);
        const sid2 = String(t2.claims()?.sid);
        const replay = await post('/oidc/token', { grant_type: 'authorization_code', code: new URL(s2.location).searchParams.get('code') ?? '', redirect_uri: rp.redirectUri, code_verifier: s2.verifier }, { authorization: basic(rp) });
        assert.equal(replay.body.error, 'invalid_grant');
        assert.equal((await logoutsFor(sid2)).length, 1);

        const t3 = await redeem(rp, await start(rp));
        const sid3 = String(t3.claims()?.sid);
        const live = (await t.services.store.grants.listForAgent(agent.id)).find((g) => g.status === 'active' && g.site === site());
        assert.ok(live);
        const me = json<{ grants: Array<{ id: string; sign_ins: Array<{ client_id: string; client_name: string }> }> }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
        assert.ok(me.grants.find((g) => g.id === live.id)?.sign_ins.some((x) => x.client_id === rp.clientId && x.client_name === 'Shop'), 'the app lists the sign-in on its grant');
        expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${live.id}/revoke`, headers: owner.auth }), 200);
        assert.equal((await logoutsFor(sid3)).length, 1);
        await assert.rejects(oidc.refreshTokenGrant(rp.config, t3.refresh_token ?? ''));
        await createGrant(t, agent, { site: site(), scopes: ['openid', 'profile'] });
      });

      it('the client revoking its own token ends the sign-in without a logout to itself', async () => {
        t.clock.set(Date.now());
        const tokens = await redeem(rp, await start(rp));
        await oidc.tokenRevocation(rp.config, tokens.refresh_token ?? '');
        await assert.rejects(oidc.refreshTokenGrant(rp.config, tokens.refresh_token ?? ''));
        assert.equal((await logoutsFor(String(tokens.claims()?.sid))).length, 0);
      });
    });

    describe('rate limits', () => {
      it(`refreshes of one sign-in: ${TOKEN_LIMITS.refreshesPerMinute} a minute, then 429 rate_limited with Retry-After; authorize: ${TOKEN_LIMITS.authorizePerAgentPerMinute} per agent a minute`, async () => {
        t.clock.set(Date.now());
        const busy = await createAgent(t, owner, 'Busy');
        await createGrant(t, busy, { site: site(), scopes: ['openid'] });
        const tokens = await redeem(rp, await start(rp, { who: busy, scope: 'openid' }));
        let refresh = tokens.refresh_token ?? '';
        for (let i = 0; i < TOKEN_LIMITS.refreshesPerMinute; i++) {
          const res = await post('/oidc/token', { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: basic(rp) });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          refresh = String(res.body.refresh_token);
        }
        const limited = await post('/oidc/token', { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: basic(rp) });
        assert.deepEqual([limited.status, limited.body.error], [429, 'rate_limited']);
        assert.ok(Number(limited.headers.get('retry-after')) > 0);
        assert.equal(limited.body.retry_after, Number(limited.headers.get('retry-after')), 'the body says how long to wait, as every 429 does');
        t.clock.advance(61_000);
        assert.equal((await post('/oidc/token', { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: basic(rp) })).status, 200, 'the limited call did not spend the token');

        // A new minute (the clock moved on above): the agent's authorize calls start from zero.
        for (let i = 0; i < TOKEN_LIMITS.authorizePerAgentPerMinute; i++) await start(rp, { who: busy, scope: 'openid' });
        const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: rp.redirectUri, scope: 'openid', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' });
        const res = await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': await agentHeader(url.href, busy) } });
        assert.equal(res.status, 429);
      });
    });
  });
}

suite('sqlite');
suite('postgres');
