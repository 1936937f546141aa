import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { discoverAuthorizationServerMetadata, exchangeAuthorization, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createDpopProof, jwkThumbprint, revocationVerdict, type EcP256PublicJwk, type RevocationClaims } from '@mandate/protocol';
import { FixedClock, seconds } from '../src/clock.ts';
import { newId } from '../src/domain/ids.ts';
import { mintCode, newCodeId } from '../src/domain/oidc/codes.ts';
import type { AgentRecord, GrantRecord } from '../src/store/ports/index.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { assertionOptions, ownerWithPasskey, respond, type Owner } from './helpers/approvals.ts';
import { revokeGrant } from './helpers/agents.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { freePort } from './helpers/server-process.ts';

// Passes for protected resources from /oidc/token (decisions §28), redeemed and refreshed with the
// official MCP SDK's own client functions against the app on a real port, on both stores; then cloud
// verify with `resource`, the site step-up with such a pass, and the revocation list. The codes are
// minted by the test as the browser flow (/oidc/authorize without the agent header) mints them.

const RESOURCE = 'https://mcp.example.com/mcp';
const OTHER_RESOURCE = 'https://mcp.example.com/other';
const HOST = 'mcp.example.com';
const SCOPES = ['tools:read', 'tools:call'];

type FetchFn = (url: string | URL, init?: RequestInit) => Promise<Response>;

interface Verified { valid: boolean; error?: string; agent_id?: string; user_id?: string; site?: string; scopes?: string[]; client_id?: string; resource?: string; scope?: string; stepup?: boolean }

function suite(backend: 'sqlite' | 'postgres'): void {
  describe(`resource passes (${backend})`, () => {
    let t: TestApp;
    let base: string;
    let owner: Owner;
    let metadata: AuthorizationServerMetadata;
    const redirectUri = 'http://127.0.0.1:7/callback';

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await testApp({ backend, env: { BASE_URL: base, OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
      await t.app.listen({ port, host: '127.0.0.1' });
      owner = await ownerWithPasskey(t, new SoftAuthenticator({ origin: base }));
      const found = await discoverAuthorizationServerMetadata(base);
      assert.ok(found);
      metadata = found;
    });
    after(() => t.close());

    /**
     * A client registered by itself (RFC 7591), and its app for the owner (as the first approval of the
     * client creates it) with a grant for `resource`.
     */
    const newApp = async (o: { resource?: string; scopes?: string[]; usesLeft?: number | null; expiresAt?: number | null } = {}): Promise<{ app: AgentRecord; grant: GrantRecord; clientId: string }> => {
      const reg = await t.app.inject({ method: 'POST', url: '/oidc/register', remoteAddress: remoteAddress(), payload: { client_name: 'MCP client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' } });
      expectStatus(reg, 201);
      const clientId = json<{ client_id: string }>(reg).client_id;
      const now = t.clock.now();
      const app: AgentRecord = {
        id: newId('ag'), userId: owner.user.id, name: 'MCP client', kind: 'app', clientId, publicJwk: null, jkt: null,
        status: 'active', flag: 'ok', flagRevSeq: null, createdAt: now, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
      };
      await t.services.store.agents.create(app);
      const resource = o.resource ?? RESOURCE;
      const grant: GrantRecord = {
        id: newId('gr'), userId: owner.user.id, agentId: app.id, site: new URL(resource).host, scopes: o.scopes ?? SCOPES, userInfo: [],
        status: 'active', createdAt: now, expiresAt: o.expiresAt ?? null, usesLeft: o.usesLeft ?? null, refreshHash: null, passesIssued: 0,
        revokedAt: null, revSeq: null, supersededAt: null, resource,
      };
      await t.services.store.grants.create(grant);
      return { app, grant, clientId };
    };

    /** A code for the app's grant, as the consent page's approval mints it, with its PKCE verifier. */
    const codeFor = ({ app, grant, clientId }: { app: AgentRecord; grant: GrantRecord; clientId: string }, o: { scopes?: string[]; resource?: string | null } = {}) => {
      const verifier = randomBytes(32).toString('base64url');
      const code = mintCode(t.services.oidc.deps.secret, {
        jti: newCodeId(), clientId, redirectUri, codeChallenge: createHash('sha256').update(verifier).digest('base64url'), nonce: null,
        agentId: app.id, userId: owner.user.id, grantId: grant.id, site: grant.site, scopes: o.scopes ?? grant.scopes,
        authTime: seconds(t.clock.now()), amr: ['passkey'], expiresAt: t.clock.now() + 60_000, dpopJkt: null,
        resource: o.resource === undefined ? grant.resource : o.resource,
      });
      return { code, verifier, clientId };
    };

    /** A DPoP key of the client, and a fetch that adds a fresh proof to every token request (RFC 9449 §5). */
    const dpopClient = async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = (await exportJWK(publicKey)) as EcP256PublicJwk;
      const jkt = await jwkThumbprint(jwk);
      const tokenProof = () => new SignJWT({ jti: randomBytes(12).toString('base64url'), htm: 'POST', htu: `${base}/oidc/token`, iat: seconds(t.clock.now()) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey);
      const fetchFn = async (url: string | URL, init?: RequestInit): Promise<Response> => {
        const headers = new Headers(init?.headers);
        headers.set('dpop', await tokenProof());
        return fetch(url, { ...init, headers });
      };
      const callProof = (accessToken: string, method: string, url: string) => createDpopProof(privateKey, jwk, { htm: method, htu: url, accessToken, iat: seconds(t.clock.now()) });
      return { jkt, fetchFn, callProof };
    };

    const redeem = (c: { code: string; verifier: string; clientId: string }, o: { resource?: string; fetchFn?: FetchFn } = {}): Promise<OAuthTokens> =>
      exchangeAuthorization(base, { metadata, clientInformation: { client_id: c.clientId }, authorizationCode: c.code, codeVerifier: c.verifier, redirectUri, ...(o.resource !== undefined ? { resource: new URL(o.resource) } : {}), ...(o.fetchFn ? { fetchFn: o.fetchFn } : {}) });
    const refresh = (clientId: string, refreshToken: string, o: { resource?: string; fetchFn?: FetchFn } = {}): Promise<OAuthTokens> =>
      refreshAuthorization(base, { metadata, clientInformation: { client_id: clientId }, refreshToken, ...(o.resource !== undefined ? { resource: new URL(o.resource) } : {}), ...(o.fetchFn ? { fetchFn: o.fetchFn } : {}) });
    /** The token endpoint's refusal, as the SDK reports it (its error class carries the OAuth code). */
    const refusedWith = (code: string) => (e: unknown) => {
      assert.match(String((e as Error).message ?? e) + String((e as { errorCode?: string }).errorCode ?? ''), new RegExp(code));
      return true;
    };
    const rawToken = async (clientId: string, form: Record<string, string>) => {
      const res = await fetch(`${base}/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, ...form }).toString() });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    const verify = async (payload: Record<string, unknown>): Promise<Verified> => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/verify', payload });
      expectStatus(res, 200);
      return json<Verified>(res);
    };
    const callUrl = `${RESOURCE}?session=1`;
    const verifyBearer = (pass: string, resource = RESOURCE) => verify({ access_token: pass, method: 'POST', url: callUrl, resource });

    it('a bearer pass: the claims, the token response, cloud verify with resource (and without it: refused)', async () => {
      const a = await newApp();
      const { app, grant, clientId } = a;
      const tokens = await redeem(codeFor(a), { resource: RESOURCE });
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.expires_in, 600);
      assert.equal(tokens.scope, 'tools:read tools:call');
      assert.equal(tokens.id_token, undefined, 'no openid: no ID token');
      assert.ok(tokens.refresh_token);
      assert.equal(decodeProtectedHeader(tokens.access_token).typ, 'at+jwt');
      const claims = decodeJwt(tokens.access_token);
      assert.deepEqual(
        { aud: claims.aud, sub: claims.sub, user: claims['user'], scope: claims['scope'], client_id: claims['client_id'], grant: claims['grant'], type: claims['type'], iss: claims.iss },
        { aud: RESOURCE, sub: app.id, user: owner.user.id, scope: SCOPES, client_id: clientId, grant: grant.id, type: 'access', iss: base },
      );
      assert.equal(claims.cnf, undefined);
      assert.equal(typeof claims['rev_seq'], 'number');
      assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 600);
      assert.ok(typeof claims.jti === 'string' && claims.jti.length >= 16);
      // The issuance counted as every pass's does.
      assert.equal((await t.services.store.grants.byId(grant.id))?.passesIssued, 1);

      const ok = await verifyBearer(tokens.access_token);
      assert.deepEqual(ok, { valid: true, agent_id: app.id, agent_name: 'MCP client', user_id: owner.user.id, site: HOST, scopes: SCOPES, user_info: {}, stepup: false, client_id: clientId, resource: RESOURCE, scope: 'tools:read tools:call' });
      // A pass for one resource is refused at every other, and a resource pass is no site's pass.
      assert.equal((await verifyBearer(tokens.access_token, OTHER_RESOURCE)).error, 'wrong_site');
      assert.equal((await verifyBearer(tokens.access_token, `${RESOURCE}/`)).error, 'wrong_site');
      assert.equal((await verify({ access_token: tokens.access_token, method: 'POST', url: callUrl, dpop: 'x.y.z' })).valid, false);
      assert.equal((await verify({ access_token: tokens.access_token, method: 'POST', url: callUrl, site: RESOURCE })).error, 'wrong_site');
      // A bearer pass sent with the DPoP scheme is refused: the scheme must be what the pass is.
      assert.equal((await verify({ access_token: tokens.access_token, method: 'POST', url: callUrl, resource: RESOURCE, token_type: 'DPoP' })).error, 'invalid_token');
    });

    it('a DPoP-bound pass: cnf, token_type DPoP; cloud verify wants the proof, once; a refresh keeps the binding and the resource', async () => {
      const a = await newApp();
      const { app, grant, clientId } = a;
      const client = await dpopClient();
      const tokens = await redeem(codeFor(a), { fetchFn: client.fetchFn });
      assert.equal(tokens.token_type, 'DPoP');
      assert.deepEqual(decodeJwt(tokens.access_token).cnf, { dpop: client.jkt, jkt: client.jkt });

      const proof = await client.callProof(tokens.access_token, 'POST', callUrl);
      const body = { access_token: tokens.access_token, method: 'POST', url: callUrl, resource: RESOURCE, dpop: proof };
      const ok = await verify(body);
      assert.equal(ok.valid, true, JSON.stringify(ok));
      assert.equal((await verify(body)).error, 'dpop_replay');
      assert.equal((await verify({ access_token: tokens.access_token, method: 'POST', url: callUrl, resource: RESOURCE })).error, 'invalid_token', 'a bound pass as a bearer one');
      assert.equal((await verify({ access_token: tokens.access_token, method: 'POST', url: callUrl, resource: RESOURCE, token_type: 'DPoP' })).error, 'invalid_dpop');

      // Refresh: the same key, the same resource; without a proof, refused (and not spent).
      await assert.rejects(refresh(clientId, tokens.refresh_token ?? ''), refusedWith('invalid_grant'));
      const again = await refresh(clientId, tokens.refresh_token ?? '', { fetchFn: client.fetchFn, resource: RESOURCE });
      assert.equal(again.token_type, 'DPoP');
      const claims = decodeJwt(again.access_token);
      assert.deepEqual([claims.aud, claims.cnf], [RESOURCE, { dpop: client.jkt, jkt: client.jkt }]);
      assert.equal((await t.services.store.grants.byId(grant.id))?.passesIssued, 2);
    });

    it('an ID token only when openid is among the scopes; a resource pass is no access token of userinfo', async () => {
      const a = await newApp({ scopes: ['openid', 'tools:read'] });
      const tokens = await redeem(codeFor(a));
      assert.ok(tokens.id_token);
      const id = decodeJwt(tokens.id_token);
      assert.deepEqual([id.aud, id.iss, typeof id.sub], [a.clientId, base, 'string']);
      assert.equal(tokens.scope, 'openid tools:read');
      assert.equal(decodeJwt(tokens.access_token).aud, RESOURCE);
      const info = await fetch(`${base}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(info.status, 401);
    });

    it('resource sent again must be the one of the code (invalid_target); a code without one takes none', async () => {
      const a = await newApp();
      const { app, grant, clientId } = a;
      const c = codeFor(a);
      const wrong = await rawToken(clientId, { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: redirectUri, resource: OTHER_RESOURCE });
      assert.deepEqual([wrong.status, wrong.body['error']], [400, 'invalid_target']);
      // The refusal spent nothing: the code still works with the right resource.
      const tokens = await redeem(c, { resource: RESOURCE });
      // Refresh with another resource: refused, the token still good.
      const bad = await rawToken(clientId, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', resource: OTHER_RESOURCE });
      assert.deepEqual([bad.status, bad.body['error']], [400, 'invalid_target']);
      assert.ok((await refresh(clientId, tokens.refresh_token ?? '')).access_token);
    });

    it('refresh rotates; a rotated token presented again ends the sign-in', async () => {
      const a = await newApp();
      const { app, grant, clientId } = a;
      const first = await redeem(codeFor(a));
      const second = await refresh(clientId, first.refresh_token ?? '');
      assert.notEqual(second.refresh_token, first.refresh_token);
      await assert.rejects(refresh(clientId, first.refresh_token ?? ''), refusedWith('invalid_grant'));
      // The reuse ended the sign-in: the current token is dead too.
      await assert.rejects(refresh(clientId, second.refresh_token ?? ''), refusedWith('invalid_grant'));
    });

    it('the sign-in lasts 30 days at most; passes end with the grant', async () => {
      const start = Date.now();
      t.clock.set(start);
      const a = await newApp({ expiresAt: start + 5 * 60_000 });
      const { app, grant, clientId } = a;
      const tokens = await redeem(codeFor(a));
      const claims = decodeJwt(tokens.access_token);
      assert.equal(claims.exp, Math.floor((start + 5 * 60_000) / 1000), 'the pass ends with the grant');
      assert.equal(tokens.expires_in, 300);
      t.clock.set(start + 6 * 60_000);
      await assert.rejects(refresh(clientId, tokens.refresh_token ?? ''), refusedWith('invalid_grant'));

      t.clock.set(start);
      const long = await newApp();
      let current = (await redeem(codeFor(long))).refresh_token ?? '';
      t.clock.set(start + 29 * 24 * 3600_000);
      current = (await refresh(long.clientId, current)).refresh_token ?? '';
      t.clock.set(start + 30 * 24 * 3600_000 + 1000);
      await assert.rejects(refresh(long.clientId, current), refusedWith('invalid_grant'));
      t.clock.set(Date.now());
    });

    it('uses: each pass spends one; none left refuses the refresh', async () => {
      t.clock.set(Date.now());
      const a = await newApp({ usesLeft: 2 });
      const { app, grant, clientId } = a;
      const tokens = await redeem(codeFor(a));
      const next = await refresh(clientId, tokens.refresh_token ?? '');
      assert.equal((await t.services.store.grants.byId(grant.id))?.usesLeft, 0);
      await assert.rejects(refresh(clientId, next.refresh_token ?? ''), refusedWith('invalid_grant'));
    });

    it('revoking the grant refuses the next call and the next refresh; so does removing the app', async () => {
      t.clock.set(Date.now());
      const a = await newApp();
      const { app, grant, clientId } = a;
      const tokens = await redeem(codeFor(a));
      assert.equal((await verifyBearer(tokens.access_token)).valid, true);
      const res = await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke`, headers: owner.auth });
      expectStatus(res, 200);
      assert.equal((await verifyBearer(tokens.access_token)).error, 'grant_revoked');
      await assert.rejects(refresh(clientId, tokens.refresh_token ?? ''), refusedWith('invalid_grant'));

      // The revocation list names the resource, so a local verifier refuses the pass unchanged.
      const list = json<RevocationClaims>(await t.app.inject({ url: '/api/v1/revocation' }));
      assert.ok(list.revoked_grants.some((g) => g.agent === app.id && g.site === RESOURCE), JSON.stringify(list.revoked_grants));
      assert.ok(!list.revoked_grants.some((g) => g.agent === app.id && g.site === HOST));
      const passClaims = decodeJwt(tokens.access_token) as unknown as { sub: string; aud: string; rev_seq: number };
      assert.equal(revocationVerdict(passClaims, list), 'grant_revoked');

      const other = await newApp();
      const tokens2 = await redeem(codeFor(other));
      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${other.app.id}`, headers: owner.auth }), 200);
      assert.equal((await verifyBearer(tokens2.access_token)).error, 'agent_revoked');
      await assert.rejects(refresh(other.clientId, tokens2.refresh_token ?? ''), refusedWith('invalid_grant'));
      const list2 = json<RevocationClaims>(await t.app.inject({ url: '/api/v1/revocation' }));
      assert.ok(list2.revoked_agents.some((a) => a.id === other.app.id && a.flag === 'revoked'));
      assert.equal(revocationVerdict(decodeJwt(tokens2.access_token) as unknown as { sub: string; aud: string; rev_seq: number }, list2), 'agent_revoked');
    });

    it('a grant revoked in the store (helper) ends the sign-in at its next refresh', async () => {
      t.clock.set(Date.now());
      const a = await newApp();
      const { app, grant, clientId } = a;
      const tokens = await redeem(codeFor(a));
      await revokeGrant(t, grant.id);
      await assert.rejects(refresh(clientId, tokens.refresh_token ?? ''), refusedWith('invalid_grant'));
    });

    it('the site step-up with a resource pass: filed, approved with the passkey, collected, used up at stepup/verify and cloud verify', async () => {
      t.clock.set(Date.now());
      const a = await newApp();
      const { app, grant, clientId } = a;
      const tokens = await redeem(codeFor(a));
      const pass = tokens.access_token;
      const file = async () => {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/site', payload: { access_token: pass, action: 'delete_repo' } });
        expectStatus(res, 200);
        return json<{ txn_id: string }>(res).txn_id;
      };
      const approveAndCollect = async (txn: string): Promise<string> => {
        const me = json<{ pending: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
        const card = me.pending.find((p) => p['id'] === txn);
        assert.deepEqual([card?.['kind'], card?.['filed_by'], card?.['site']], ['stepup', 'site', RESOURCE]);
        const options = await assertionOptions(t, owner, txn);
        expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options) }), 200);
        const polled = await t.app.inject({ url: `/api/v1/stepup/site/${txn}`, headers: { authorization: `Bearer ${pass}` } });
        expectStatus(polled, 200);
        const body = json<{ status: string; stepup_token?: string; stepup_token_error?: string }>(polled);
        assert.equal(body.status, 'approved', JSON.stringify(body));
        assert.ok(body.stepup_token);
        assert.equal(decodeJwt(body.stepup_token).aud, RESOURCE);
        return body.stepup_token;
      };

      const token = await approveAndCollect(await file());
      const used = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: { stepup_token: token, site: RESOURCE, action: 'delete_repo', agent_id: app.id, user_id: owner.user.id } });
      assert.deepEqual(json(used), { valid: true, agent_id: app.id, user_id: owner.user.id, site: RESOURCE, actions: ['delete_repo'] });
      assert.equal(json<Verified>(await t.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: { stepup_token: token, site: RESOURCE, action: 'delete_repo' } })).error, 'stepup_used_or_expired');

      // The same through cloud verify with resource: checked against the pass, used up once.
      const token2 = await approveAndCollect(await file());
      const withStepup = await verify({ access_token: pass, method: 'POST', url: callUrl, resource: RESOURCE, stepup_token: token2, action: 'delete_repo' });
      assert.deepEqual([withStepup.valid, withStepup.stepup], [true, true], JSON.stringify(withStepup));
      assert.equal((await verify({ access_token: pass, method: 'POST', url: callUrl, resource: RESOURCE, stepup_token: token2, action: 'delete_repo' })).error, 'stepup_used_or_expired');

      // A step-up for this app and resource is not another app's: its pass can neither poll it nor spend it.
      const other = await newApp({ resource: OTHER_RESOURCE });
      const otherPass = (await redeem(codeFor(other))).access_token;
      const txn3 = await file();
      const token3 = await approveAndCollect(txn3);
      const foreignPoll = await t.app.inject({ url: `/api/v1/stepup/site/${txn3}`, headers: { authorization: `Bearer ${otherPass}` } });
      expectStatus(foreignPoll, 404);
      const foreign = await verify({ access_token: otherPass, method: 'POST', url: `${OTHER_RESOURCE}?x`, resource: OTHER_RESOURCE, stepup_token: token3, action: 'delete_repo' });
      assert.equal(foreign.valid, false);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: { stepup_token: token3, site: OTHER_RESOURCE, action: 'delete_repo' } })).json<Verified>().error, 'stepup_wrong_site');

      // The receipt, read with the pass that filed it.
      expectStatus(await t.app.inject({ url: `/api/v1/receipts/${txn3}`, headers: { authorization: `Bearer ${pass}` } }), 200);
      expectStatus(await t.app.inject({ url: `/api/v1/receipts/${txn3}`, headers: { authorization: `Bearer ${otherPass}` } }), 404);

      // Revoking the app's grant: its pass files nothing more.
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant.id}/revoke`, headers: owner.auth }), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/stepup/site', payload: { access_token: pass, action: 'delete_repo' } }), 403);
    });

    it('bad input at the token endpoint and cloud verify: 4xx / valid:false, never 5xx', async () => {
      const a = await newApp();
      const { app, grant, clientId } = a;
      const c = codeFor(a);
      for (const resource of ['', 'not a url', 'x'.repeat(5000), `${RESOURCE}#frag`]) {
        const res = await rawToken(clientId, { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: redirectUri, resource });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body['error'], 'invalid_target');
      }
      for (const extra of [{ resource: '' }, { resource: 'x'.repeat(3000) }, { resource: 42 }, { token_type: 'Basic', resource: RESOURCE }, { resource: RESOURCE, dpop: '' }]) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/verify', payload: { access_token: 'a.b.c', method: 'GET', url: callUrl, ...extra } });
        assert.equal(res.statusCode, 200);
        assert.deepEqual([json<Verified>(res).valid, json<Verified>(res).error], [false, 'invalid_request'], JSON.stringify(extra));
      }
      const garbage = await verify({ access_token: 'a.b.c', method: 'GET', url: callUrl, resource: RESOURCE });
      assert.equal(garbage.error, 'invalid_token');
    });
  });
}

suite('sqlite');
suite('postgres');
