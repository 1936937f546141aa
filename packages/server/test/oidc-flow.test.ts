import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { createAgentJwt } from '@mandate/protocol';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { approve, ownerWithPasskey, respond, type Owner } from './helpers/approvals.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { freePort } from './helpers/server-process.ts';
import { FixedClock, seconds } from '../src/clock.ts';

// The OIDC provider's first slice (decisions §12, §18), with openid-client v6 as the relying party
// against the app listening on a real port; the test plays the agent (it sends the authorize call
// with X-Service-Agent) and the owner (it approves the card with a soft passkey).

interface Rp {
  clientId: string;
  secret: string;
  redirectUri: string;
  config: oidc.Configuration;
}

interface Started {
  location: string;
  verifier: string;
  state: string;
  nonce: string;
}

function flow(backend: 'sqlite' | 'postgres'): void {
  describe(`OIDC sign-in with openid-client (${backend})`, () => {
    let t: TestApp;
    let base: string;
    let port: number;
    let owner: Owner;
    let agent: TestAgent;
    let rpA: Rp;
    let rpB: Rp;
    let publicRp: { clientId: string; redirectUri: string; config: oidc.Configuration };
    let siteOwner: Awaited<ReturnType<typeof signUp>>;

    const agentHeader = async (htu: string, o: { jti?: string; lifetimeSec?: number; who?: TestAgent } = {}) => {
      const who = o.who ?? agent;
      return createAgentJwt(who.privateKey, who.id, { iat: seconds(t.clock.now()), lifetimeSec: o.lifetimeSec ?? 60, jti: o.jti ?? randomBytes(12).toString('base64url'), htu });
    };

    const register = async (redirectUri: string, extra: Record<string, unknown> = {}) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: siteOwner.auth, payload: { name: 'Shop', redirect_uris: [redirectUri], ...extra } });
      expectStatus(res, 200);
      return json<{ client_id: string; client_secret?: string }>(res);
    };

    const rp = async (redirectUri: string, auth: 'basic' | 'post'): Promise<Rp> => {
      const c = await register(redirectUri);
      const secret = c.client_secret ?? '';
      const clientAuth = auth === 'basic' ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
      const config = await oidc.discovery(new URL(base), c.client_id, { redirect_uris: [redirectUri] }, clientAuth, { execute: [oidc.allowInsecureRequests] });
      return { clientId: c.client_id, secret, redirectUri, config };
    };

    /** The agent's authorize call: the RP builds the URL, the agent sends it with its header. */
    const start = async (r: { config: oidc.Configuration; redirectUri: string }, o: { who?: TestAgent; params?: Record<string, string>; header?: (url: URL) => Promise<string | undefined> } = {}): Promise<Started & { status: number; body: string }> => {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(r.config, {
        redirect_uri: r.redirectUri, scope: 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, ...o.params,
      });
      const h = o.header ? await o.header(url) : await agentHeader(url.href, { ...(o.who ? { who: o.who } : {}) });
      const res = await fetch(url, { redirect: 'manual', headers: h === undefined ? {} : { 'x-service-agent': h } });
      return { location: res.headers.get('location') ?? '', verifier, state, nonce, status: res.status, body: await res.text() };
    };

    const redeem = (r: { config: oidc.Configuration }, s: Started, location = s.location) =>
      oidc.authorizationCodeGrant(r.config, new URL(location), { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce, idTokenExpected: true });

    const rejects = async (p: Promise<unknown>, error: string) => {
      await assert.rejects(p, (e: unknown) => {
        const err = e as { error?: string; code?: string; cause?: { error?: string } };
        assert.equal(err.error ?? err.cause?.error, error, String(e));
        return true;
      });
    };

    const tokenPost = (body: string | Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${base}/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: typeof body === 'string' ? body : new URLSearchParams(body).toString() });

    const siteA = () => `127.0.0.1:${port}`;

    before(async () => {
      port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await testApp({ backend, env: { BASE_URL: base, OUTBOUND_ALLOW_LOOPBACK: 'true' }, clock: new FixedClock(Date.now()) });
      await t.app.listen({ port, host: '127.0.0.1' });
      owner = await ownerWithPasskey(t, new SoftAuthenticator({ origin: base }));
      agent = await createAgent(t, owner, 'Shopper');
      siteOwner = await signUp(t.app);
      rpA = await rp(`http://127.0.0.1:${port}/cb`, 'basic');
      rpB = await rp(`http://localhost:${port}/cb`, 'post');
      const pub = await register(`http://127.0.0.1:${port}/public-cb`, { public: true });
      publicRp = { clientId: pub.client_id, redirectUri: `http://127.0.0.1:${port}/public-cb`, config: await oidc.discovery(new URL(base), pub.client_id, { redirect_uris: [`http://127.0.0.1:${port}/public-cb`] }, oidc.None(), { execute: [oidc.allowInsecureRequests] }) };
    });
    after(() => t.close());

    it('publishes discovery (both addresses) listing only what exists, and the same keys as /api/v1/jwks', async () => {
      const d = await (await fetch(`${base}/.well-known/openid-configuration`)).json() as Record<string, unknown>;
      const d2 = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
      assert.deepEqual(d2, d);
      assert.equal(d.issuer, base);
      assert.equal(d.jwks_uri, `${base}/oidc/jwks`);
      assert.deepEqual(d.id_token_signing_alg_values_supported, ['ES256']);
      assert.deepEqual(d.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(d.response_types_supported, ['code']);
      assert.deepEqual(d.subject_types_supported, ['pairwise']);
      assert.deepEqual(d.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
      assert.equal(d.backchannel_authentication_endpoint, `${base}/oidc/bc-authorize`);
      assert.deepEqual(d.backchannel_token_delivery_modes_supported, ['poll']);
      assert.deepEqual(d.dpop_signing_alg_values_supported, ['ES256']);
      assert.deepEqual(d.scopes_supported, ['openid', 'profile', 'email', 'phone']);
      assert.equal(d.backchannel_logout_supported, true);
      for (const key of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'revocation_endpoint', 'introspection_endpoint', 'backchannel_authentication_endpoint']) {
        const res = await fetch(String(d[key]), { method: ['token_endpoint', 'revocation_endpoint', 'introspection_endpoint', 'backchannel_authentication_endpoint'].includes(key) ? 'POST' : 'GET' });
        assert.notEqual(res.status, 404, `${key} exists`);
        assert.ok(res.status < 500, `${key} ${res.status}`);
      }
      const a = await (await fetch(`${base}/oidc/jwks`)).json();
      const b = await (await fetch(`${base}/api/v1/jwks`)).json();
      assert.deepEqual(a, b);
    });

    it('a live grant for the site answers with a code at once; openid-client checks the ID token; userinfo; pairwise subs', async () => {
      const grant = await createGrant(t, agent, { site: siteA(), scopes: ['openid', 'profile'] });
      const s = await start(rpA);
      assert.equal(s.status, 302, s.body);
      const loc = new URL(s.location);
      assert.equal(`${loc.origin}${loc.pathname}`, rpA.redirectUri);
      assert.equal(loc.searchParams.get('iss'), base);
      assert.equal(loc.searchParams.get('state'), s.state);
      const tokens = await redeem(rpA, s);
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'openid profile');
      assert.equal(tokens.expires_in, 600);
      const claims = tokens.claims();
      assert.ok(claims);
      assert.equal(claims.iss, base);
      assert.equal(claims.aud, rpA.clientId);
      assert.equal(claims.nonce, s.nonce);
      assert.deepEqual(claims.amr, ['agent', 'grant']);
      assert.equal(typeof claims.auth_time, 'number');
      assert.equal(typeof claims.sid, 'string');
      assert.equal(claims.name, `Shopper (agent of ${(await t.services.store.users.byId(owner.user.id))?.displayName})`);
      const act = claims.act as { sub: string; name: string };
      assert.equal(act.name, 'Shopper');
      assert.notEqual(claims.sub, owner.user.id);
      assert.notEqual(act.sub, agent.id);
      assert.equal(claims.exp - claims.iat, 600);
      const header = decodeProtectedHeader(tokens.id_token ?? '');
      assert.equal(header.alg, 'ES256');
      assert.ok(header.kid);
      const at = decodeProtectedHeader(tokens.access_token);
      assert.equal(at.typ, 'at+jwt');
      assert.equal(decodeJwt(tokens.access_token).exp! - decodeJwt(tokens.access_token).iat!, 600);

      const info = await oidc.fetchUserInfo(rpA.config, tokens.access_token, claims.sub);
      assert.equal(info.sub, claims.sub);
      assert.deepEqual(info.act, act);
      assert.equal(info.name, claims.name);
      assert.equal(info.email, undefined);

      // Stable at one site...
      const again = await redeem(rpA, await start(rpA));
      assert.equal(again.claims()?.sub, claims.sub);
      assert.equal((again.claims()?.act as { sub: string }).sub, act.sub);
      // ...different at another (localhost:port is another host).
      await createGrant(t, agent, { site: `localhost:${port}`, scopes: ['openid', 'profile'] });
      const atB = await redeem(rpB, await start(rpB));
      assert.notEqual(atB.claims()?.sub, claims.sub);
      assert.notEqual((atB.claims()?.act as { sub: string }).sub, act.sub);
      assert.ok(grant.id);
    });

    it('without a grant the owner approves a card (kind oidc) with the passkey; /status then gives the redirect', async () => {
      const other = await createAgent(t, owner, 'Helper');
      const s = await start(rpA, { who: other });
      assert.equal(s.status, 302, s.body);
      const wait = new URL(s.location);
      const m = /^\/oidc\/authorize\/wait\/(t_[a-z2-7]+)$/.exec(wait.pathname);
      assert.ok(m?.[1], s.location);
      const txn = m[1];
      const k = wait.searchParams.get('k') ?? '';
      const status = async (key = k) => fetch(`${base}/oidc/authorize/wait/${txn}/status?k=${encodeURIComponent(key)}`);
      assert.deepEqual(((await (await status()).json()) as { status: string }).status, 'pending');
      // Without the right k, nothing.
      expectStatus404(await status(''));
      expectStatus404(await status(`${k.slice(0, -2)}AA`));
      const page = await fetch(s.location, { redirect: 'manual' });
      assert.equal(page.status, 200);
      assert.match(String(page.headers.get('content-type')), /text\/html/);
      // The owner was told (the card of kind oidc; a loopback redirect is an unverified site).
      const notes = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 20, since: 0 });
      const note = notes.find((n) => n.txnId === txn);
      assert.ok(note, 'a notification for the sign-in');
      assert.match(note.title, /sign in to 127\.0\.0\.1:\d+ \(unverified site\)/);
      expectStatus(await approve(t, owner, txn), 200);
      const done = (await (await status()).json()) as { redirect: string };
      assert.ok(done.redirect.startsWith(`${rpA.redirectUri}?`), JSON.stringify(done));
      const tokens = await redeem(rpA, s, done.redirect);
      assert.deepEqual(tokens.claims()?.amr, ['agent', 'passkey']);
      // A second /status gives a code with the same id: it cannot be redeemed again.
      const second = (await (await status()).json()) as { redirect: string };
      await rejects(redeem(rpA, s, second.redirect), 'invalid_grant');
      // The grant the approval created is filed under the redirect host with the OIDC scopes.
      const g = await t.services.store.grants.activeFor(other.id, siteA());
      assert.deepEqual(g?.scopes, ['openid', 'profile']);
    });

    it('a denied card redirects with access_denied', async () => {
      const other = await createAgent(t, owner, 'Denied');
      const s = await start(rpA, { who: other });
      const wait = new URL(s.location);
      const txn = wait.pathname.split('/')[4] ?? '';
      expectStatus(await respond(t, owner, txn, { approve: false }), 200);
      const done = (await (await fetch(`${wait.href.replace(`/wait/${txn}`, `/wait/${txn}/status`)}`)).json()) as { redirect: string };
      const u = new URL(done.redirect);
      assert.equal(u.searchParams.get('error'), 'access_denied');
      assert.equal(u.searchParams.get('state'), s.state);
    });

    it('refresh rotates; reusing a rotated token ends the sign-in (all its tokens)', async () => {
      const tokens = await redeem(rpA, await start(rpA));
      const rt1 = tokens.refresh_token ?? '';
      const second = await oidc.refreshTokenGrant(rpA.config, rt1);
      const rt2 = second.refresh_token ?? '';
      assert.notEqual(rt2, rt1);
      assert.equal(second.claims()?.sub, tokens.claims()?.sub);
      await oidc.fetchUserInfo(rpA.config, second.access_token, second.claims()?.sub ?? '');
      await rejects(oidc.refreshTokenGrant(rpA.config, rt1), 'invalid_grant');
      await rejects(oidc.refreshTokenGrant(rpA.config, rt2), 'invalid_grant');
      await assert.rejects(oidc.fetchUserInfo(rpA.config, second.access_token, second.claims()?.sub ?? ''));
    });

    it('a refresh token of another client is refused and left untouched', async () => {
      const tokens = await redeem(rpA, await start(rpA));
      await rejects(oidc.refreshTokenGrant(rpB.config, tokens.refresh_token ?? ''), 'invalid_grant');
      const still = await oidc.refreshTokenGrant(rpA.config, tokens.refresh_token ?? '');
      assert.ok(still.access_token);
    });

    it('revoking the grant or removing the agent ends the sign-in', async () => {
      const a = await createAgent(t, owner, 'Ending');
      const grant = await createGrant(t, a, { site: siteA(), scopes: ['openid', 'profile'] });
      const tokens = await redeem(rpA, await start(rpA, { who: a }));
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke`, headers: owner.auth }), 200);
      await rejects(oidc.refreshTokenGrant(rpA.config, tokens.refresh_token ?? ''), 'invalid_grant');
      await assert.rejects(oidc.fetchUserInfo(rpA.config, tokens.access_token, tokens.claims()?.sub ?? ''));

      const b = await createAgent(t, owner, 'Removed');
      await createGrant(t, b, { site: siteA(), scopes: ['openid', 'profile'] });
      const tb = await redeem(rpA, await start(rpA, { who: b }));
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${b.id}`, headers: owner.auth }), 200);
      await rejects(oidc.refreshTokenGrant(rpA.config, tb.refresh_token ?? ''), 'invalid_grant');
    });

    it('ending a sign-in queues a back-channel logout for a client with a backchannel_logout_uri (sid and pairwise sub)', async () => {
      const redirectUri = `http://127.0.0.1:${port}/bcl-cb`;
      const c = await register(redirectUri, { backchannel_logout_uri: `http://127.0.0.1:${port}/bcl` });
      const config = await oidc.discovery(new URL(base), c.client_id, { redirect_uris: [redirectUri] }, oidc.ClientSecretPost(c.client_secret ?? ''), { execute: [oidc.allowInsecureRequests] });
      const logouts = async (userId: string) => (await t.services.store.outbox.list({ userId, kind: 'logout' })).map((m) => m.payload as { sid: string; sub: string; client_id: string; uri: string });
      const a = await createAgent(t, owner, 'Logged out by revoke');
      const grant = await createGrant(t, a, { site: siteA(), scopes: ['openid', 'profile'] });
      const tokens = await redeem({ config }, await start({ config, redirectUri }, { who: a }));
      const claims = tokens.claims();
      const before = (await logouts(owner.user.id)).length;
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke`, headers: owner.auth }), 200);
      const after1 = await logouts(owner.user.id);
      assert.equal(after1.length, before + 1);
      assert.ok(after1.some((m) => m.sid === claims?.sid && m.sub === claims?.sub && m.client_id === c.client_id && m.uri === `http://127.0.0.1:${port}/bcl`));
      await rejects(oidc.refreshTokenGrant(config, tokens.refresh_token ?? ''), 'invalid_grant');

      const b = await createAgent(t, owner, 'Logged out by removal');
      await createGrant(t, b, { site: siteA(), scopes: ['openid', 'profile'] });
      const tb = await redeem({ config }, await start({ config, redirectUri }, { who: b }));
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${b.id}`, headers: owner.auth }), 200);
      assert.ok((await logouts(owner.user.id)).some((m) => m.sid === tb.claims()?.sid));
    });

    it('POST /oidc/authorize takes a form; its htu names the endpoint with the form as query', async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const form = new URLSearchParams({ client_id: rpA.clientId, redirect_uri: rpA.redirectUri, response_type: 'code', scope: 'openid profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'a b+c' });
      const htu = `${base}/oidc/authorize?${form.toString()}`;
      const post = (h: string) => fetch(`${base}/oidc/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-service-agent': h }, body: form.toString() });
      const res = await post(await agentHeader(htu));
      assert.equal(res.status, 302);
      const loc = new URL(res.headers.get('location') ?? '');
      assert.equal(loc.searchParams.get('state'), 'a b+c');
      const tokens = await oidc.authorizationCodeGrant(rpA.config, loc, { pkceCodeVerifier: verifier, expectedState: 'a b+c' });
      assert.ok(tokens.access_token);
      assert.equal(tokens.claims()?.nonce, undefined);
      // The htu of a GET to another query does not pass for this form.
      assert.equal((await post(await agentHeader(`${base}/oidc/authorize?client_id=${rpA.clientId}`))).status, 401);
    });

    it('prompt=none without a covering grant redirects consent_required; prompt=login asks the owner even with a grant', async () => {
      const a = await createAgent(t, owner, 'Prompted');
      const none = await start(rpA, { who: a, params: { prompt: 'none' } });
      assert.equal(new URL(none.location).searchParams.get('error'), 'consent_required');
      await createGrant(t, a, { site: siteA(), scopes: ['openid', 'profile'] });
      const login = await start(rpA, { who: a, params: { prompt: 'login' } });
      assert.match(new URL(login.location).pathname, /^\/oidc\/authorize\/wait\/t_/);
      const fresh = await start(rpA, { who: a, params: { max_age: '0' } });
      assert.equal(new URL(fresh.location).pathname, new URL(login.location).pathname, 'the waiting request is reused');
      const silent = await start(rpA, { who: a, params: { prompt: 'none' } });
      assert.ok(new URL(silent.location).searchParams.get('code'));
    });

    it('introspection (confidential clients) and revocation (ends the whole sign-in; another client\'s token untouched; always 200)', async () => {
      const tokens = await redeem(rpA, await start(rpA));
      const claims = tokens.claims();
      const at = await oidc.tokenIntrospection(rpA.config, tokens.access_token);
      assert.equal(at.active, true);
      assert.equal(at.sub, claims?.sub);
      assert.equal(at.client_id, rpA.clientId);
      assert.equal(at.scope, 'openid profile');
      assert.equal(at.token_type, 'access_token');
      assert.deepEqual(at.act, { sub: (claims?.act as { sub: string }).sub });
      const rt = await oidc.tokenIntrospection(rpA.config, tokens.refresh_token ?? '');
      assert.equal(rt.active, true);
      assert.equal(rt.token_type, 'refresh_token');
      assert.deepEqual(await oidc.tokenIntrospection(rpB.config, tokens.access_token), { active: false });
      assert.deepEqual(await oidc.tokenIntrospection(rpA.config, 'garbage'), { active: false });
      const pub = await fetch(`${base}/oidc/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: tokens.access_token, client_id: publicRp.clientId }).toString() });
      assert.equal(pub.status, 401);

      // Another client's revocation leaves it alone; so does one without client authentication.
      await oidc.tokenRevocation(rpB.config, tokens.refresh_token ?? '');
      const anon = await fetch(`${base}/oidc/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: tokens.refresh_token ?? '' }).toString() });
      assert.equal(anon.status, 200);
      const garbage = await fetch(`${base}/oidc/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1' });
      assert.equal(garbage.status < 500, true);
      assert.equal((await oidc.tokenIntrospection(rpA.config, tokens.refresh_token ?? '')).active, true);
      // The access token ends the whole sign-in: the refresh token dies with it.
      await oidc.tokenRevocation(rpA.config, tokens.access_token);
      assert.equal((await oidc.tokenIntrospection(rpA.config, tokens.refresh_token ?? '')).active, false);
      await rejects(oidc.refreshTokenGrant(rpA.config, tokens.refresh_token ?? ''), 'invalid_grant');
      await assert.rejects(oidc.fetchUserInfo(rpA.config, tokens.access_token, claims?.sub ?? ''));
    });

    it('a public client signs in with PKCE and no secret', async () => {
      const tokens = await redeem(publicRp, await start(publicRp));
      assert.equal(tokens.claims()?.aud, publicRp.clientId);
      // A public client cannot pass for a confidential one: client_id alone is not enough for rpA.
      const res = await tokenPost({ grant_type: 'refresh_token', refresh_token: 'x', client_id: rpA.clientId });
      assert.equal(res.status, 401);
    });

    it('attacks: code replay (and it ends the first sign-in), code for another client, wrong verifier, wrong redirect_uri', async () => {
      const s = await start(rpA);
      const code = new URL(s.location).searchParams.get('code') ?? '';
      // Another client cannot redeem it, and trying does not burn it.
      const other = await tokenPost({ grant_type: 'authorization_code', code, redirect_uri: rpA.redirectUri, code_verifier: s.verifier, client_id: rpB.clientId, client_secret: rpB.secret });
      assert.equal(other.status, 400);
      assert.equal(((await other.json()) as { error: string }).error, 'invalid_grant');
      assert.equal(other.headers.get('cache-control'), 'no-store');
      const basic = { authorization: `Basic ${Buffer.from(`${encodeURIComponent(rpA.clientId)}:${encodeURIComponent(rpA.secret)}`).toString('base64')}` };
      const wrongVerifier = await tokenPost({ grant_type: 'authorization_code', code, redirect_uri: rpA.redirectUri, code_verifier: oidc.randomPKCECodeVerifier() }, basic);
      assert.equal(((await wrongVerifier.json()) as { error: string }).error, 'invalid_grant');
      const noVerifier = await tokenPost({ grant_type: 'authorization_code', code, redirect_uri: rpA.redirectUri }, basic);
      assert.equal(((await noVerifier.json()) as { error: string }).error, 'invalid_grant');
      const wrongRedirect = await tokenPost({ grant_type: 'authorization_code', code, redirect_uri: `${rpA.redirectUri}x`, code_verifier: s.verifier }, basic);
      assert.equal(((await wrongRedirect.json()) as { error: string }).error, 'invalid_grant');
      const tokens = await redeem(rpA, s);
      await rejects(redeem(rpA, s), 'invalid_grant');
      // The replay ended what the first redemption issued.
      await rejects(oidc.refreshTokenGrant(rpA.config, tokens.refresh_token ?? ''), 'invalid_grant');
    });

    it('a code redeemed by concurrent requests gives tokens exactly once', async () => {
      const s = await start(rpA);
      const code = new URL(s.location).searchParams.get('code') ?? '';
      const body = { grant_type: 'authorization_code', code, redirect_uri: rpA.redirectUri, code_verifier: s.verifier, client_id: rpA.clientId, client_secret: rpA.secret };
      const answers = await Promise.all(Array.from({ length: 6 }, () => tokenPost(body)));
      assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400, 400, 400, 400, 400]);
    });

    it('attacks: missing or plain PKCE redirects invalid_request; an unregistered redirect URI or unknown client never redirects', async () => {
      for (const params of [{ code_challenge_method: 'plain' }, { code_challenge: '', code_challenge_method: '' }]) {
        const url = oidc.buildAuthorizationUrl(rpA.config, { redirect_uri: rpA.redirectUri, scope: 'openid', state: 'st', ...(params.code_challenge_method === 'plain' ? { code_challenge: oidc.randomPKCECodeVerifier(), code_challenge_method: 'plain' } : {}) });
        const res = await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': await agentHeader(url.href) } });
        assert.equal(res.status, 302);
        const loc = new URL(res.headers.get('location') ?? '');
        assert.equal(`${loc.origin}${loc.pathname}`, rpA.redirectUri);
        assert.equal(loc.searchParams.get('error'), 'invalid_request');
        assert.equal(loc.searchParams.get('state'), 'st');
        assert.equal(loc.searchParams.get('code'), null);
      }
      const s = await start(rpA, { params: { redirect_uri: 'https://evil.example/cb' } });
      assert.equal(s.status, 400);
      assert.equal(s.location, '');
      const u = await start(rpA, { params: { client_id: 'c_aaaaaaaaaaaaaaaaaaaaaaaaaa' } });
      assert.equal(u.status, 400);
      assert.equal(u.location, '');
    });

    it('attacks: a replayed agent header, a header for another URL, alg none, HS256 confusion, a long-lived or absent header are refused', async () => {
      const url = oidc.buildAuthorizationUrl(rpA.config, { redirect_uri: rpA.redirectUri, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
      const h = await agentHeader(url.href);
      assert.equal((await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': h } })).status, 302);
      const replay = await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': h } });
      assert.equal(replay.status, 401);
      assert.equal(replay.headers.get('location'), null);
      // The old header name works the same.
      assert.equal((await fetch(url, { redirect: 'manual', headers: { 'x-authyouragent-agent': await agentHeader(url.href) } })).status, 302);
      const elsewhere = new URL(url);
      elsewhere.searchParams.set('state', 'other');
      assert.equal((await fetch(elsewhere, { redirect: 'manual', headers: { 'x-service-agent': await agentHeader(url.href) } })).status, 401);
      assert.equal((await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': await agentHeader(url.href, { lifetimeSec: 300 }) } })).status, 401);
      // Without a header it is a person's browser (decisions §28): a consent page, never a code.
      const browser = await fetch(url, { redirect: 'manual' });
      assert.equal(browser.status, 200);
      assert.equal(browser.headers.get('location'), null);
      assert.match(await browser.text(), /Approve with passkey/);
      const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const iat = seconds(t.clock.now());
      const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: agent.id, sub: agent.id, type: 'agent', iat, exp: iat + 60, jti: 'abcdefghijk', htu: url.href })}.`;
      assert.equal((await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': none } })).status, 401);
      // alg none as an access token at userinfo.
      const fake = `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64({ iss: base, aud: base, sub: 'x', sid: 'y', iat, exp: iat + 60 })}.`;
      const ui = await fetch(`${base}/oidc/userinfo`, { headers: { authorization: `Bearer ${fake}` } });
      assert.equal(ui.status, 401);
      assert.match(String(ui.headers.get('www-authenticate')), /invalid_token/);
      // HS256 confusion: a token MACed with the client's own secret (what a confused verifier would take
      // for our signature), naming one of our real kids, is refused at userinfo and by introspection.
      const { keys } = await (await fetch(`${base}/oidc/jwks`)).json() as { keys: Array<{ kid: string }> };
      const hs = await new SignJWT({ iss: base, aud: base, sub: 'x', sid: 'y', client_id: rpA.clientId, iat, exp: iat + 60 })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: keys[0]?.kid ?? '' }).sign(new TextEncoder().encode(rpA.secret));
      assert.equal((await fetch(`${base}/oidc/userinfo`, { headers: { authorization: `Bearer ${hs}` } })).status, 401);
      const seen = await fetch(`${base}/oidc/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${rpA.clientId}:${rpA.secret}`).toString('base64')}` }, body: new URLSearchParams({ token: hs }).toString() });
      assert.deepEqual(await seen.json(), { active: false });
    });

    it('token endpoint: client authentication errors are invalid_client 401 with WWW-Authenticate; Basic credentials are form-decoded', async () => {
      const bad = await tokenPost({ grant_type: 'authorization_code', code: 'x' }, { authorization: `Basic ${Buffer.from(`${rpA.clientId}:wrong`).toString('base64')}` });
      assert.equal(bad.status, 401);
      assert.ok(bad.headers.get('www-authenticate'));
      assert.equal(((await bad.json()) as { error: string }).error, 'invalid_client');
      // c_x arrives as c%5Fx: decoded, so authentication passes and the code is what fails.
      const encoded = await tokenPost({ grant_type: 'authorization_code', code: 'x' }, { authorization: `Basic ${Buffer.from(`${rpA.clientId.replace('_', '%5F')}:${encodeURIComponent(rpA.secret)}`).toString('base64')}` });
      assert.equal(encoded.status, 400);
      assert.equal(((await encoded.json()) as { error: string }).error, 'invalid_grant');
    });

    it('bad input of every shape is 4xx, never 5xx', async () => {
      const basic = { authorization: `Basic ${Buffer.from(`${rpA.clientId}:${rpA.secret}`).toString('base64')}` };
      const bodies: [string | Record<string, string>, Record<string, string>][] = [
        ['', {}], ['', basic], ['%%%', basic], ['grant_type=authorization_code&grant_type=refresh_token', basic],
        [{ grant_type: 'password' }, basic], [{ grant_type: 'authorization_code' }, basic], [{ grant_type: 'authorization_code', code: 'a'.repeat(5000) }, basic],
        [{ grant_type: 'refresh_token', refresh_token: 'x.y' }, basic], [{ grant_type: 'refresh_token', refresh_token: `${'a'.repeat(32)}.${'b'.repeat(43)}` }, basic],
        [{ grant_type: 'authorization_code', code: 'x' }, { authorization: 'Basic !!!' }], [{ grant_type: 'authorization_code', code: 'x' }, { authorization: 'Bearer x' }],
        [{ grant_type: 'authorization_code', code: 'x' }, { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }],
        [{ grant_type: 'authorization_code', code: 'x' }, { authorization: `Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}` }],
        [{ grant_type: 'authorization_code', code: 'x', client_id: rpA.clientId, client_secret: rpA.secret }, basic],
      ];
      for (const [body, headers] of bodies) {
        const res = await tokenPost(body, headers);
        assert.ok(res.status >= 400 && res.status < 500, `${JSON.stringify(body)} ${res.status}`);
        assert.equal(res.headers.get('cache-control'), 'no-store');
      }
      const asJson = await fetch(`${base}/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"authorization_code"}' });
      assert.ok(asJson.status >= 400 && asJson.status < 500, String(asJson.status));
      const authorizeUrls = ['/oidc/authorize', '/oidc/authorize?client_id=', '/oidc/authorize?client_id=c_x&redirect_uri=%%', `/oidc/authorize?client_id=${rpA.clientId}`, `/oidc/authorize?client_id=${rpA.clientId}&redirect_uri=${encodeURIComponent(rpA.redirectUri)}&response_type=token`, `/oidc/authorize?client_id=${rpA.clientId}&client_id=${rpA.clientId}&redirect_uri=${encodeURIComponent(rpA.redirectUri)}`];
      for (const path of authorizeUrls) {
        for (const h of [{} as Record<string, string>, { 'x-service-agent': 'garbage' }, { 'x-service-agent': 'a.b.c' }, { 'x-service-agent': await agentHeader(`${base}${path}`) }]) {
          const res = await fetch(`${base}${path}`, { redirect: 'manual', headers: h });
          assert.ok(res.status < 500, `${path} ${res.status}`);
        }
      }
      const post = await fetch(`${base}/oidc/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.ok(post.status >= 400 && post.status < 500, String(post.status));
      for (const path of ['/oidc/authorize/wait/t_x/status', '/oidc/authorize/wait/t_aaaaaaaaaaaaaaaaaaaaaaaaaa/status?k=abc', `/oidc/authorize/wait/${'t'.repeat(300)}/status`, '/oidc/authorize/wait/t_aaaaaaaaaaaaaaaaaaaaaaaaaa?k=' + 'A'.repeat(100)]) {
        const res = await fetch(`${base}${path}`, { redirect: 'manual' });
        assert.ok(res.status >= 400 && res.status < 500, `${path} ${res.status}`);
      }
      for (const h of [{} as Record<string, string>, { authorization: 'Bearer' }, { authorization: 'Bearer a.b.c' }, { authorization: 'Basic x' }, { authorization: `Bearer ${'a'.repeat(5000)}` }]) {
        const res = await fetch(`${base}/oidc/userinfo`, { headers: h });
        assert.equal(res.status, 401);
      }
    });
  });
}

function expectStatus404(res: Response): void {
  assert.equal(res.status, 404);
}

flow('sqlite');
flow('postgres');

describe('OIDC and the logs', () => {
  it('never log the agent header or the k of a wait address', async () => {
    const { Writable } = await import('node:stream');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { buildApp } = await import('../src/app.ts');
    const { parseConfig } = await import('../src/config/config.ts');
    const { openSqliteStore } = await import('../src/store/sqlite/open.ts');
    const lines: string[] = [];
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const dir = mkdtempSync(join(tmpdir(), 'mandate-logs-'));
    const store = await openSqliteStore(dir);
    const { app } = await buildApp({ config: parseConfig({ DATA_DIR: dir, LOG_LEVEL: 'trace' }), store, logStream });
    try {
      const k = 'SECRETK' + 'x'.repeat(60);
      const header = 'HEADERSECRET.abc.def';
      await app.inject({ url: `/oidc/authorize/wait/t_aaaaaaaaaaaaaaaaaaaaaaaaaa/status?k=${k}` });
      await app.inject({ url: `/oidc/authorize/wait/t_aaaaaaaaaaaaaaaaaaaaaaaaaa?x=1&k=${k}` });
      await app.inject({ url: '/oidc/authorize?client_id=c_x', headers: { 'x-service-agent': header, 'x-authyouragent-agent': header } });
      const text = lines.join('');
      assert.ok(text.includes('/oidc/authorize/wait/'), 'requests are logged');
      assert.ok(!text.includes(k), 'k is not logged');
      assert.ok(!text.includes('HEADERSECRET'), 'the agent header is not logged');
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
