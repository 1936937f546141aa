import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FixedClock } from '../src/clock.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant } from './helpers/agents.ts';
import { accessRequest, addPasskey, ownerWithPasskey, withPasskeySession } from './helpers/approvals.ts';
import { deliver, landing, setCookies, startFlow, walkIssuer } from './helpers/identity-flow.ts';
import { startIdentityProviderStandIn, type IdentityProviderStandIn } from './helpers/stand-ins/identity-provider.ts';
import { START_LIMIT } from '../src/domain/identity-providers/deps.ts';

// Identity providers (decisions §15; issue 23 item 5), in process on both stores, against two real
// OpenID Providers (oidc-provider 8 on loopback) standing in for Google and Microsoft: the list,
// linking, signing in, everything that must be refused (unlinked identities, even with the owner's
// email; identities linked elsewhere; reused, foreign and tampered states; nonce and issuer
// mismatches; access_denied), and approving an access request by a fresh sign-in, from another
// browser, but never a step-up, never with another owner's identity, never with a stale sign-in.

const BASE = 'http://localhost:8080';
let seq = 0;
const sub = (name: string) => `${name}-${++seq}-${Date.now()}`;

function suite(backend: 'sqlite' | 'postgres'): void {
  describe(`identity providers (${backend})`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let google: IdentityProviderStandIn;
    let microsoft: IdentityProviderStandIn;

    before(async () => {
      google = await startIdentityProviderStandIn({ redirectUris: [`${BASE}/api/oauth/google/callback`] });
      microsoft = await startIdentityProviderStandIn({ redirectUris: [`${BASE}/api/oauth/microsoft/callback`] });
      t = await testApp({
        backend,
        clock: new FixedClock(Date.now()),
        env: {
          OUTBOUND_ALLOW_LOOPBACK: 'true', OAUTH_PROVIDERS: 'google,microsoft,offline', ...google.env('google'), ...microsoft.env('microsoft', 'Microsoft work account'),
          // An issuer nobody answers at (the discard port): every answer about it must still be a redirect, never a 5xx.
          OAUTH_OFFLINE_ISSUER: 'http://127.0.0.1:9', OAUTH_OFFLINE_CLIENT_ID: 'c', OAUTH_OFFLINE_CLIENT_SECRET: 's', OAUTH_OFFLINE_LABEL: 'Offline SSO',
        },
      });
    });
    after(async () => {
      await t?.close();
      await google?.stop();
      await microsoft?.stop();
    });

    const providers = async (auth: Record<string, string> = {}) => {
      const res = await t.app.inject({ url: '/api/oauth/providers', headers: auth });
      expectStatus(res, 200);
      return json<{ name: string; label: string; linked: boolean }[]>(res);
    };
    /** A new owner with `who` at Google linked. */
    const linkedOwner = async (who: string) => {
      const owner = await signUp(t.app);
      google.signInAs({ sub: who });
      const flow = await startFlow(t, 'google', owner.auth);
      assert.equal(landing(await deliver(t, flow.callback, flow, owner.auth)).oauth, 'linked');
      return owner;
    };
    const actions = async (auth: Record<string, string>) => json<{ items: { action: string; detail: Record<string, unknown> }[] }>(await t.app.inject({ url: '/api/activity', headers: auth })).items;

    it('lists the providers: labels, and linked for the signed-in owner only', async () => {
      assert.deepEqual(await providers(), [{ name: 'google', label: 'Google', linked: false }, { name: 'microsoft', label: 'Microsoft work account', linked: false }, { name: 'offline', label: 'Offline SSO', linked: false }]);
      const owner = await linkedOwner(sub('lister'));
      assert.deepEqual((await providers(owner.auth)).map((p) => [p.name, p.linked]), [['google', true], ['microsoft', false], ['offline', false]]);
      assert.deepEqual((await providers()).map((p) => p.linked), [false, false, false], 'signed out: nothing linked');
    });

    it('a start that cannot begin lands in the app with the reason: unknown provider, unreachable issuer', async () => {
      const unknown = landing(await t.app.inject({ url: '/api/oauth/nosuch/start', remoteAddress: remoteAddress() }));
      assert.deepEqual([unknown.oauth, unknown.reason], ['refused', 'unknown_provider']);
      assert.match(unknown.detail ?? '', /no identity provider named "nosuch"/);
      const offline = landing(await t.app.inject({ url: '/api/oauth/offline/start', remoteAddress: remoteAddress() }));
      assert.deepEqual([offline.oauth, offline.reason], ['refused', 'issuer_error']);
      assert.match(offline.detail ?? '', /Offline SSO could not be reached/);
      assert.equal(landing(await t.app.inject({ url: '/api/oauth/offline/callback?code=x&state=y' })).reason, 'bad_state');
    });

    it('links an identity, then signs in with it: a new session of method oauth, recorded', async () => {
      const owner = await signUp(t.app);
      const alice = sub('alice');
      google.signInAs({ sub: alice, email: owner.email });
      const link = await startFlow(t, 'google', owner.auth);
      assert.ok(link.cookie, 'the flow is bound to the browser');
      const linked = await deliver(t, link.callback, link, owner.auth);
      assert.deepEqual(landing(linked), { view: 'account', oauth: 'linked', reason: null, detail: null, provider: 'google' });

      const signIn = await startFlow(t, 'google');
      const res = await deliver(t, signIn.callback, signIn);
      assert.deepEqual(landing(res), { view: 'requests', oauth: 'signed_in', reason: null, detail: null, provider: 'google' });
      const session = setCookies(res)['session'];
      assert.ok(session, 'a session cookie is set');
      const me = json<{ id: string; session_method: string }>(await t.app.inject({ url: '/api/me', headers: { cookie: `session=${session}` } }));
      assert.deepEqual([me.id, me.session_method], [owner.user.id, 'oauth']);
      const trail = (await actions(owner.auth)).map((a) => a.action);
      assert.ok(trail.includes('oauth.linked') && trail.includes('oauth.sign_in'), trail.join());

      // An oauth session is not a passkey session.
      const withPasskey = await ownerWithPasskey(t);
      const carol = sub('carol');
      const passwordLink = await t.app.inject({ url: '/api/oauth/microsoft/start', headers: withPasskey.auth, remoteAddress: remoteAddress() });
      const refusal = landing(passwordLink);
      assert.deepEqual([refusal.view, refusal.oauth], ['account', 'refused']);
      assert.equal(refusal.reason, 'passkey_session_needed', 'an owner with a passkey links only from a passkey session');
      assert.match(refusal.detail ?? '', /passkey/);
      void carol;
    });

    it('an owner with a passkey links from a passkey session; signing in with the provider is no passkey session', async () => {
      const owner = await withPasskeySession(t, await ownerWithPasskey(t));
      const lee = sub('lee');
      google.signInAs({ sub: lee });
      const link = await startFlow(t, 'google', owner.auth);
      assert.equal(landing(await deliver(t, link.callback, link, owner.auth)).oauth, 'linked');
      const signIn = await startFlow(t, 'google');
      const cookie = `session=${setCookies(await deliver(t, signIn.callback, signIn))['session']}`;
      expectStatus(await t.app.inject({ url: '/api/webauthn/register/options', headers: { cookie } }), 403);
      expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/oauth/google', headers: { cookie, origin: BASE } }), 403);
      expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/oauth/google', headers: owner.auth }), 200);
    });

    it('a passkey added while linking raises the bar: a password session cannot finish the link', async () => {
      const owner = await signUp(t.app);
      google.signInAs({ sub: sub('kim') });
      const flow = await startFlow(t, 'google', owner.auth);
      await addPasskey(t, owner);
      const out = landing(await deliver(t, flow.callback, flow, owner.auth));
      assert.deepEqual([out.view, out.oauth, out.reason], ['account', 'refused', 'passkey_session_needed']);
      assert.match(out.detail ?? '', /passkey/);
      assert.equal((await providers(owner.auth))[0]?.linked, false);
    });

    it('refuses an unlinked identity: no account made, none taken over, even with the same email', async () => {
      const owner = await signUp(t.app);
      google.signInAs({ sub: sub('stranger'), email: owner.email });
      const flow = await startFlow(t, 'google');
      const res = await deliver(t, flow.callback, flow);
      const out = landing(res);
      assert.equal(out.reason, 'not_linked');
      assert.match(out.detail ?? '', /not linked to a Mandate account/);
      assert.equal(setCookies(res)['session'], undefined, 'no session');
      const holder = await t.services.store.users.byEmail(owner.email);
      assert.equal(holder?.id, owner.user.id, 'the address still belongs to its account');
      assert.deepEqual((await providers(owner.auth)).map((p) => p.linked), [false, false, false], 'nothing was linked to the owner');
    });

    it('an identity linked to one account cannot be linked to another; one identity per provider per account', async () => {
      const bob = sub('bob');
      const first = await linkedOwner(bob);
      const second = await signUp(t.app);
      google.signInAs({ sub: bob });
      const flow = await startFlow(t, 'google', second.auth);
      const out = landing(await deliver(t, flow.callback, flow, second.auth));
      assert.deepEqual([out.view, out.reason], ['account', 'linked_elsewhere']);
      assert.deepEqual((await providers(second.auth)).map((p) => p.linked), [false, false, false]);
      assert.equal((await providers(first.auth))[0]?.linked, true);

      const again = await t.app.inject({ url: '/api/oauth/google/start', headers: first.auth, remoteAddress: remoteAddress() });
      assert.deepEqual([landing(again).reason, landing(again).detail], ['provider_taken', 'a Google account is linked already; unlink it first to link another'], 'a second Google account needs the first unlinked');
    });

    it('unlinks: the identity no longer signs in; unlinking again is 404', async () => {
      const dora = sub('dora');
      const owner = await linkedOwner(dora);
      expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/oauth/google', headers: owner.auth }), 200);
      expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/oauth/google', headers: owner.auth }), 404);
      expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/oauth/nosuch', headers: owner.auth }), 404);
      google.signInAs({ sub: dora });
      const flow = await startFlow(t, 'google');
      assert.equal(landing(await deliver(t, flow.callback, flow)).reason, 'not_linked');
      assert.ok((await actions(owner.auth)).some((a) => a.action === 'oauth.unlinked'));
    });

    it('refuses a reused state, a state of another provider, another browser and a missing state', async () => {
      const erin = sub('erin');
      await linkedOwner(erin);
      google.signInAs({ sub: erin });
      const flow = await startFlow(t, 'google');
      assert.equal(landing(await deliver(t, flow.callback, flow)).oauth, 'signed_in');
      assert.equal(landing(await deliver(t, flow.callback, flow)).reason, 'bad_state', 'single-use');

      const raced = await startFlow(t, 'google');
      const outcomes = (await Promise.all([1, 2, 3].map(() => deliver(t, raced.callback, raced)))).map((r) => landing(r).oauth);
      assert.deepEqual(outcomes.sort(), ['refused', 'refused', 'signed_in'], 'of racing callbacks with one state, exactly one signs in');

      const other = await startFlow(t, 'google');
      assert.equal(landing(await deliver(t, other.callback, other, {}, { path: '/api/oauth/microsoft/callback' })).reason, 'bad_state', 'a Google state at the Microsoft callback');
      assert.equal(landing(await deliver(t, other.callback, other)).reason, 'bad_state', 'and it was used up there');

      const elsewhere = await startFlow(t, 'google');
      assert.equal(landing(await deliver(t, elsewhere.callback, elsewhere, {}, { withCookie: false })).reason, 'other_browser', 'a sign-in callback opened in another browser (login CSRF)');
      assert.equal(landing(await t.app.inject({ url: '/api/oauth/google/callback?code=abc' })).reason, 'bad_state');
      assert.equal(landing(await t.app.inject({ url: '/api/oauth/nosuch/callback?code=abc&state=x' })).reason, 'unknown_provider');
    });

    it('refuses a nonce or issuer mismatch, and says access_denied when the person refuses', async () => {
      const fay = sub('fay');
      await linkedOwner(fay);
      google.signInAs({ sub: fay });
      google.swapNextNonce();
      const swapped = await startFlow(t, 'google');
      const nonce = landing(await deliver(t, swapped.callback, swapped));
      assert.equal(nonce.reason, 'invalid_response');
      assert.match(nonce.detail ?? '', /nonce/);

      const flow = await startFlow(t, 'google');
      const forged = new URL(flow.callback);
      forged.searchParams.set('iss', microsoft.issuer);
      const issuer = landing(await deliver(t, forged, flow));
      assert.equal(issuer.reason, 'invalid_response');
      assert.match(issuer.detail ?? '', /iss/);

      google.refuse();
      const denied = await startFlow(t, 'google');
      const out = landing(await deliver(t, denied.callback, denied));
      assert.equal(out.reason, 'access_denied');
      assert.match(out.detail ?? '', /Google answered access_denied/);
    });

    describe('approving with a linked provider', () => {
      const approveStart = (auth: Record<string, string>, txn: string, body: unknown = null, provider = 'google') =>
        t.app.inject({ method: 'POST', url: `/api/txn/${txn}/oauth/${provider}`, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(body), remoteAddress: remoteAddress() });

      it('approves an access request from another browser (no cookie at the callback), with limits, as a passkey would', async () => {
        const gus = sub('gus');
        const owner = await linkedOwner(gus);
        const agent = await createAgent(t, owner);
        const txn = await accessRequest(t, agent);
        const started = await approveStart(owner.auth, txn, { max_uses: 3 });
        expectStatus(started, 200);
        const { redirect } = json<{ redirect: string }>(started);
        google.signInAs({ sub: gus });
        const callback = await walkIssuer(redirect, BASE);
        const sent = google.authorizations.at(-1);
        assert.deepEqual([sent?.get('max_age'), sent?.get('prompt')], ['0', 'login'], 'a fresh sign-in is asked for');
        const out = landing(await t.app.inject({ url: `${callback.pathname}${callback.search}` }));
        assert.deepEqual([out.view, out.oauth], [`requests/${txn}`, 'approved']);

        const request = await t.services.store.authzRequests.byId(txn);
        assert.equal(request?.status, 'approved');
        const grant = request?.grantId ? await t.services.store.grants.byId(request.grantId) : undefined;
        assert.equal(grant?.usesLeft, 3, 'the limits travelled with the state');
        const record = (await actions(owner.auth)).find((a) => a.action === 'request.approved');
        assert.deepEqual([record?.detail.via, record?.detail.provider, record?.detail.txn_id], ['identity_provider', 'google', txn]);
        expectStatus(await approveStart(owner.auth, txn), 409);
      });

      it('refuses step-ups, unlinked providers, bad limits and other owners\' requests before the issuer', async () => {
        const hal = sub('hal');
        const owner = await linkedOwner(hal);
        const agent = await createAgent(t, owner);
        await createGrant(t, agent);
        const stepup = await t.app.inject({ method: 'POST', url: '/api/v1/stepup', remoteAddress: remoteAddress(), payload: { agent_id: agent.id, site: 'shop.example', action: 'pay 42 EUR to ACME', agent_jwt: await agent.jwt() } });
        expectStatus(stepup, 200);
        const refused = await approveStart(owner.auth, json<{ txn_id: string }>(stepup).txn_id);
        expectStatus(refused, 409);
        assert.match(json<{ detail: string }>(refused).detail, /only be approved with a passkey/);

        const other = await createAgent(t, owner, 'Other');
        const txn = await accessRequest(t, other, { site: 'books.example' });
        expectStatus(await approveStart(owner.auth, txn, null, 'microsoft'), 409);
        expectStatus(await approveStart(owner.auth, txn, { expires_in: 5 }), 400);
        expectStatus(await approveStart(owner.auth, txn, null, 'nosuch'), 404);
        const stranger = await signUp(t.app);
        expectStatus(await approveStart(stranger.auth, txn), 404);
        expectStatus(await approveStart({}, txn), 401);
      });

      it('refuses the identity linked to another owner, and a stale sign-in', async () => {
        const ivy = sub('ivy');
        const jon = sub('jon');
        const owner = await linkedOwner(ivy);
        await linkedOwner(jon);
        const agent = await createAgent(t, owner);
        const txn = await accessRequest(t, agent);

        const started = await approveStart(owner.auth, txn);
        google.signInAs({ sub: jon });
        const callback = await walkIssuer(json<{ redirect: string }>(started).redirect, BASE);
        const wrong = landing(await t.app.inject({ url: `${callback.pathname}${callback.search}` }));
        assert.deepEqual([wrong.view, wrong.reason], [`requests/${txn}`, 'wrong_owner']);

        const again = await approveStart(owner.auth, txn);
        google.signInAs({ sub: ivy });
        const late = await walkIssuer(json<{ redirect: string }>(again).redirect, BASE);
        t.clock.advance(6 * 60_000);
        const stale = landing(await t.app.inject({ url: `${late.pathname}${late.search}` }));
        assert.equal(stale.reason, 'stale_sign_in');
        assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'pending', 'nothing was approved');
      });
    });

    // Last: it moves the clock to a fresh window, which would make earlier fresh sign-ins look stale.
    it(`starts: ${START_LIMIT.perAddress} per client address per ${START_LIMIT.windowSec / 60} minutes, sign-ins, links and approvals together; then a refusal (429 with Retry-After for the API)`, async () => {
      const windowMs = START_LIMIT.windowSec * 1000;
      t.clock.set(Math.ceil(t.clock.now() / windowMs) * windowMs + 1000);
      const address = '203.0.113.7';
      const owner = await linkedOwner(sub('lim'));
      const agent = await createAgent(t, owner);
      const txn = await accessRequest(t, agent);
      const approveFrom = (from: string) => t.app.inject({ method: 'POST', url: `/api/txn/${txn}/oauth/google`, headers: { ...owner.auth, 'content-type': 'application/json' }, payload: 'null', remoteAddress: from });
      for (let i = 0; i < START_LIMIT.perAddress; i++) {
        const res = i % 3 === 2 ? await approveFrom(address) : await t.app.inject({ url: '/api/oauth/google/start', remoteAddress: address });
        assert.equal(res.statusCode, i % 3 === 2 ? 200 : 302, res.body);
        if (res.statusCode === 302) assert.ok(String(res.headers.location).startsWith(google.issuer), 'to the issuer');
      }
      const refused = await approveFrom(address);
      expectStatus(refused, 429);
      assert.equal(refused.headers['retry-after'], String(START_LIMIT.windowSec - 1));
      assert.equal(json<{ retry_after: number }>(refused).retry_after, START_LIMIT.windowSec - 1);
      // The browser start is a redirect whatever happens: into the app, with the reason.
      const browser = landing(await t.app.inject({ url: '/api/oauth/google/start', remoteAddress: address }));
      assert.deepEqual([browser.oauth, browser.reason], ['refused', 'rate_limited']);
      // Another address is not limited; the next window starts afresh (the request has expired by then: a browser start).
      expectStatus(await approveFrom(remoteAddress()), 200);
      t.clock.advance(windowMs);
      const again = await t.app.inject({ url: '/api/oauth/google/start', remoteAddress: address });
      assert.ok(String(again.headers.location).startsWith(google.issuer), String(again.headers.location));
    });
  });
}

suite('sqlite');
suite('postgres');
