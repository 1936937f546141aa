import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createAgentJwt } from '@mandate/protocol';
import { decodeJwt } from 'jose';
import { FixedClock, seconds } from '../src/clock.ts';
import { expectStatus, json, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from './helpers/agents.ts';
import { freePort } from './helpers/server-process.ts';
import { MetadataDocumentSite } from './helpers/stand-ins/metadata-documents.ts';

// MCP clients known to the OIDC provider (decisions §28), over real HTTP on both stores: discovery,
// a client_id that is the URL of a metadata document served by a local site (OUTBOUND_ALLOW_LOOPBACK),
// and RFC 7591 registration. The test plays the agent (X-Service-Agent) with a live grant, so the
// authorize call answers a code at once; the person's browser flow is a later part.

function suite(backend: 'sqlite' | 'postgres'): void {
  describe(`MCP clients: metadata documents and registration (${backend})`, () => {
    let t: TestApp;
    let base: string;
    let agent: TestAgent;
    let site: MetadataDocumentSite;

    const pkce = () => {
      const verifier = randomBytes(32).toString('base64url');
      return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
    };

    /** The agent's authorize call for `clientId`; answers status, Location and body. */
    const authorize = async (clientId: string, redirectUri: string, challenge: string, extra: Record<string, string> = {}) => {
      const url = new URL(`${base}/oidc/authorize`);
      const params = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'openid profile', code_challenge: challenge, code_challenge_method: 'S256', state: 'st', ...extra };
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      const header = await createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()), lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu: url.href });
      const res = await fetch(url, { redirect: 'manual', headers: { 'x-service-agent': header } });
      return { status: res.status, location: res.headers.get('location'), body: await res.text() };
    };

    const token = async (form: Record<string, string>) => {
      const res = await fetch(`${base}/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, wwwAuthenticate: res.headers.get('www-authenticate') };
    };

    /** A public client's whole code flow with a live grant at the redirect URI's host. */
    const signIn = async (clientId: string, redirectUri: string) => {
      const { verifier, challenge } = pkce();
      const a = await authorize(clientId, redirectUri, challenge);
      assert.equal(a.status, 302, a.body);
      const loc = new URL(a.location ?? '');
      assert.equal(`${loc.origin}${loc.pathname}`, redirectUri);
      assert.equal(loc.searchParams.get('iss'), base);
      const code = loc.searchParams.get('code') ?? '';
      assert.ok(code !== '', a.location ?? '');
      return token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, client_id: clientId });
    };

    /** The client names the owner's grant list shows for the live sign-ins at `site`. */
    const signInNames = async (site: string): Promise<string[]> => {
      const res = await t.app.inject({ method: 'GET', url: '/api/grants', headers: agent.owner.auth });
      expectStatus(res, 200);
      return json<{ site: string; sign_ins: { client_name: string }[] }[]>(res).filter((g) => g.site === site).flatMap((g) => g.sign_ins.map((x) => x.client_name));
    };

    const register = (payload: unknown, remoteAddress = '192.0.2.10', contentType = 'application/json') =>
      t.app.inject({ method: 'POST', url: '/oidc/register', remoteAddress, headers: { 'content-type': contentType }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

    before(async () => {
      site = await new MetadataDocumentSite().start();
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await testApp({ backend, env: { BASE_URL: base, OUTBOUND_ALLOW_LOOPBACK: 'true' }, clock: new FixedClock(Date.now()) });
      await t.app.listen({ port, host: '127.0.0.1' });
      agent = await createAgent(t, undefined, 'Claude helper');
    });
    after(async () => {
      await t.close();
      await site.stop();
      assert.deepEqual(site.problems, []);
    });

    it('discovery lists what MCP clients look for, the same at both addresses', async () => {
      const d = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.deepEqual((await (await fetch(`${base}/.well-known/openid-configuration`)).json()), d);
      assert.equal(d.client_id_metadata_document_supported, true);
      assert.equal(d.authorization_response_iss_parameter_supported, true);
      assert.ok((d.token_endpoint_auth_methods_supported as string[]).includes('none'));
      assert.deepEqual(d.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(d.dpop_signing_alg_values_supported, ['ES256']);
      assert.equal(d.registration_endpoint, `${base}/oidc/register`);
      // What was there stays.
      assert.equal(d.issuer, base);
      assert.equal(d.token_endpoint, `${base}/oidc/token`);
      assert.equal(d.backchannel_logout_supported, true);
    });

    it('a metadata document client signs in as a public client: authorize and token, one fetch', async () => {
      const redirectUri = `${site.origin}/callback`;
      const clientId = site.serve('/oauth/client.json', { body: { client_id: `${site.origin}/oauth/client.json`, client_name: 'Claude', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }, headers: { 'cache-control': 'max-age=3600' } });
      await createGrant(t, agent, { site: new URL(redirectUri).host, scopes: ['openid', 'profile'] });
      const tokens = await signIn(clientId, redirectUri);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.equal(decodeJwt(String(tokens.body.id_token)).aud, clientId);
      assert.equal(decodeJwt(String(tokens.body.access_token)).client_id, clientId);
      assert.equal(site.count('/oauth/client.json'), 1, 'authorize fetched it, token used what was kept');
      // Its refresh token works for it (no secret), and for nobody else.
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: String(tokens.body.refresh_token), client_id: clientId });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      // The owner sees the sign-in under the document's host (the document itself is not stored).
      assert.deepEqual(await signInNames(new URL(redirectUri).host), [new URL(clientId).host]);
    });

    it('PKCE is required of a metadata document client: without it the error goes to its redirect URI', async () => {
      const redirectUri = `${site.origin}/callback`;
      const clientId = site.serve('/oauth/pkce.json', { body: { client_id: `${site.origin}/oauth/pkce.json`, client_name: 'Claude', redirect_uris: [redirectUri] } });
      const a = await authorize(clientId, redirectUri, pkce().challenge, { code_challenge_method: 'plain' });
      assert.equal(a.status, 302);
      assert.equal(new URL(a.location ?? '').searchParams.get('error'), 'invalid_request');
    });

    it('an unlisted redirect_uri, or a refused document, is a 400 at authorize with no redirect', async () => {
      const clientId = site.serve('/oauth/listed.json', { body: { client_id: `${site.origin}/oauth/listed.json`, client_name: 'Claude', redirect_uris: [`${site.origin}/callback`] } });
      const unlisted = await authorize(clientId, 'https://attacker.example/cb', pkce().challenge);
      assert.equal(unlisted.status, 400, unlisted.body);
      assert.equal(unlisted.location, null);
      assert.match(unlisted.body, /redirect_uri is not registered/);
      const liar = site.serve('/oauth/liar.json', { body: { client_id: 'https://claude.example/client.json', client_name: 'Claude', redirect_uris: ['https://attacker.example/cb'] } });
      const refused = await authorize(liar, 'https://attacker.example/cb', pkce().challenge);
      assert.equal(refused.status, 400, refused.body);
      assert.equal(refused.location, null);
      const body = JSON.parse(refused.body) as { error: string; detail: string };
      assert.equal(body.error, 'invalid_client');
      assert.match(body.detail, /client_id.*equal to its own URL/);
      const unknown = await authorize('rc_nosuchclient', 'https://attacker.example/cb', pkce().challenge);
      assert.equal(unknown.status, 400);
      assert.equal((JSON.parse(unknown.body) as { error: string }).error, 'invalid_client');
    });

    it('the token endpoint answers a refused document as invalid_client (401)', async () => {
      const refused = await token({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://a.example/cb', code_verifier: 'v'.repeat(43), client_id: `${site.origin}/oauth/missing.json` });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'invalid_client');
      assert.match(String(refused.body.error_description), /answered 404/);
      assert.ok(refused.wwwAuthenticate);
    });

    it('registers a public client (201, no secret), which then signs in like any public client', async () => {
      const redirectUri = 'http://127.0.0.1:43123/callback';
      const res = await register({ client_name: ' VS Code ', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], client_uri: 'https://code.example', software_id: 'ignored' });
      expectStatus(res, 201);
      assert.equal(res.headers['cache-control'], 'no-store');
      const c = json<Record<string, unknown>>(res);
      assert.match(String(c.client_id), /^rc_[a-z2-7]{26}$/);
      assert.equal(c.client_secret, undefined);
      assert.equal(c.client_name, 'VS Code');
      assert.deepEqual(c.redirect_uris, [redirectUri]);
      assert.equal(c.token_endpoint_auth_method, 'none');
      assert.equal(c.client_uri, 'https://code.example');
      assert.equal(c.client_id_issued_at, seconds(t.clock.now()));
      await createGrant(t, agent, { site: '127.0.0.1:43123', scopes: ['openid', 'profile'] });
      const tokens = await signIn(String(c.client_id), redirectUri);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.deepEqual(await signInNames('127.0.0.1:43123'), ['VS Code']);
      // A registered client has no secret: Basic credentials for it fail like any wrong secret.
      const basic = await fetch(`${base}/oidc/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${String(c.client_id)}:guess`).toString('base64')}` }, body: 'grant_type=refresh_token&refresh_token=x' });
      assert.equal(basic.status, 401);
    });

    it('a registration without client_name is named "Unnamed app"', async () => {
      const res = await register({ redirect_uris: ['https://app.example/cb'] }, '192.0.2.11');
      expectStatus(res, 201);
      assert.equal(json<{ client_name: string }>(res).client_name, 'Unnamed app');
    });

    it('refuses confidential clients, bad redirect URIs and other metadata, with RFC 7591 errors', async () => {
      const cases: [unknown, string, RegExp][] = [
        [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata', /must be "none"/],
        [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /must be "none"/],
        [{ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata', /grant_types/],
        [{ redirect_uris: ['https://app.example/cb'], response_types: ['token'] }, 'invalid_client_metadata', /response_types/],
        [{ redirect_uris: ['https://app.example/cb'], client_name: '' }, 'invalid_client_metadata', /client_name must be 1 to 100/],
        [{ redirect_uris: ['https://app.example/cb'], client_name: 5 }, 'invalid_client_metadata', /client_name/],
        [{ redirect_uris: ['https://app.example/cb'], logo_uri: 'http://app.example/logo.png' }, 'invalid_client_metadata', /logo_uri/],
        [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri', /must be an https: URL/],
        [{ redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri', /fragment/],
        [{ redirect_uris: [] }, 'invalid_redirect_uri', /redirect_uris/],
        [{ redirect_uris: 'https://app.example/cb' }, 'invalid_redirect_uri', /redirect_uris/],
        [{ client_name: 'No URIs' }, 'invalid_client_metadata', /redirect_uris/],
        [[1, 2], 'invalid_client_metadata', /object/],
      ];
      for (const [payload, error, detail] of cases) {
        const res = await register(payload, '192.0.2.12');
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        const body = json<{ error: string; error_description: string }>(res);
        assert.equal(body.error, error, `${JSON.stringify(payload)}: ${res.body}`);
        assert.match(body.error_description, detail, JSON.stringify(payload));
      }
      for (const [payload, type] of [['redirect_uris=https://app.example/cb', 'application/x-www-form-urlencoded'], ['{"redirect_uris": [', 'application/json'], ['', 'application/json']] as const) {
        const res = await register(payload, '192.0.2.12', type);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json<{ error: string }>(res).error, 'invalid_client_metadata', res.body);
      }
    });

    it('allows 10 registrations an hour from one address: the 11th is 429 with Retry-After; another address still registers', async () => {
      for (let i = 0; i < 10; i++) expectStatus(await register({ client_name: `App ${i}`, redirect_uris: ['https://app.example/cb'] }, '198.51.100.7'), 201);
      const over = await register({ client_name: 'App 11', redirect_uris: ['https://app.example/cb'] }, '198.51.100.7');
      expectStatus(over, 429);
      assert.ok(Number(over.headers['retry-after']) > 0);
      assert.equal(json<{ error: string }>(over).error, 'rate_limited');
      expectStatus(await register({ client_name: 'Elsewhere', redirect_uris: ['https://app.example/cb'] }, '198.51.100.8'), 201);
      t.clock.advance(3600_000);
      expectStatus(await register({ client_name: 'Next hour', redirect_uris: ['https://app.example/cb'] }, '198.51.100.7'), 201);
    });
  });
}

suite('sqlite');
suite('postgres');
