import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createAgentJwt, generateAgentKeyPair } from '@mandate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { seconds } from '../src/clock.ts';
import { openCode } from '../src/domain/oidc/codes.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { type Owner, ownerWithPasskey } from './helpers/approvals.ts';
import { MetadataDocumentSite } from './helpers/stand-ins/metadata-documents.ts';

// A person's browser at /oidc/authorize (decisions §28), on both stores: the consent page and its
// warnings, every refused request (a 4xx page before the redirect URI is known good, an error
// redirect to it after), the passkey approval that creates (then reuses) the app agent and a grant
// per resource, deny, single use and the binding to the owner, and that an app never authenticates
// as an agent. Metadata documents come from a local site (OUTBOUND_ALLOW_LOOPBACK).

const BASE = 'http://localhost:8080';

interface Started { consent_id: string; options: { challenge: string } }

function suite(backend: 'sqlite' | 'postgres'): void {
  describe(`a person's browser at /oidc/authorize (${backend})`, () => {
    let t: TestApp;
    let site: MetadataDocumentSite;
    let owner: Owner;
    /** A metadata document client whose redirect URI is on its own host (127.0.0.1:port). */
    let cimd: { id: string; redirectUri: string };

    const pkce = () => {
      const verifier = randomBytes(32).toString('base64url');
      return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
    };
    const query = (clientId: string, redirectUri: string, over: Record<string, string | undefined> = {}): string => {
      const all: Record<string, string | undefined> = {
        response_type: 'code', client_id: clientId, redirect_uri: redirectUri, resource: 'https://mcp.example/mcp', scope: 'tools:read tools:write',
        code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 'st-1', ...over,
      };
      return new URLSearchParams(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined)).toString();
    };
    const page = (q: string) => t.app.inject({ url: `/oidc/authorize?${q}` });
    const post = (url: string, who: { auth: Record<string, string> }, payload: unknown) => t.app.inject({ method: 'POST', url, headers: who.auth, payload: payload as Record<string, unknown> });
    const start = (who: { auth: Record<string, string> }, q: string) => post('/api/oidc/consent/start', who, { authorize: q });
    async function started(who: Owner, q: string): Promise<Started> {
      const res = await start(who, q);
      expectStatus(res, 200);
      return json<Started>(res);
    }
    const approve = (who: Owner, s: Started, assertion: unknown = who.authenticator.assert(s.options)) => post('/api/oidc/consent/approve', who, { consent_id: s.consent_id, assertion });
    /** The whole approval: answers the redirect URL. */
    async function approved(who: Owner, q: string): Promise<URL> {
      const res = await approve(who, await started(who, q));
      expectStatus(res, 200);
      return new URL(json<{ redirect: string }>(res).redirect);
    }
    const code = (redirect: URL) => {
      const opened = openCode(t.services.oidc.deps.secret, redirect.searchParams.get('code') ?? '');
      assert.ok(opened, redirect.href);
      return opened;
    };
    const redirectOf = (res: LightMyRequestResponse): URL => {
      assert.equal(res.statusCode, 302, res.body);
      return new URL(String(res.headers.location));
    };
    const agents = async (who: Owner) => json<{ id: string; name: string; kind: string; client_id: string | null; jkt: string | null; status: string }[]>(await t.app.inject({ url: '/api/agents', headers: who.auth }));
    const grants = async (who: Owner) => json<{ id: string; agent_id: string; site: string; resource: string | null; scopes: string[] }[]>(await t.app.inject({ url: '/api/grants', headers: who.auth }));
    const activity = async (who: Owner) => JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: who.auth })));

    before(async () => {
      site = await new MetadataDocumentSite().start();
      t = await testApp({ backend, env: { BASE_URL: BASE, OUTBOUND_ALLOW_LOOPBACK: 'true' } });
      owner = await ownerWithPasskey(t);
      const redirectUri = `${site.origin}/callback`;
      cimd = { id: site.serve('/claude.json', { body: { client_id: `${site.origin}/claude.json`, client_name: 'Claude <b>', redirect_uris: [redirectUri, 'https://elsewhere.example/cb', 'http://localhost:33418/callback'], client_uri: 'https://claude.example', logo_uri: 'https://claude.example/logo.png' }, headers: { 'cache-control': 'max-age=3600' } }), redirectUri };
    });
    after(async () => {
      await t.close();
      await site.stop();
    });

    it('shows the consent page: who (escaped), its host, the resource and scopes, logo and website as text; never cached', async () => {
      const res = await page(query(cimd.id, cimd.redirectUri));
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-store');
      // An approval page must not be framed by the app that asks (clickjacking the Approve button).
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.ok(res.body.includes('Allow Claude &lt;b&gt;?'), 'the name, escaped');
      assert.ok(!res.body.includes('Claude <b>'));
      const host = new URL(site.origin).host;
      assert.ok(res.body.includes(`<strong>Claude &lt;b&gt;</strong> (${host}) wants to act for you at <strong class="ac-resource">https://mcp.example/mcp</strong> with <code>tools:read</code>, <code>tools:write</code>.`), res.body);
      assert.ok(res.body.includes('<code>https://claude.example/logo.png</code>'), 'the logo as text');
      assert.ok(!/<img/i.test(res.body), 'nothing the app names is loaded');
      // The stand-in site is on 127.0.0.1: its redirect URI is a program on this computer, on the client_id's own host.
      assert.match(res.body, /class="cn-warning">The approval goes to a program on this computer/);
      assert.ok(!res.body.includes('The app says it is'), 'the redirect URI is on the client_id host');
      assert.match(res.body, /src="\/assets\/app\/app-consent\.js\?v=[\w-]{12}"/);
      expectStatus(await t.app.inject({ url: '/assets/app/app-consent.js' }), 200);
    });

    it('warns when the redirect URI is on another host than the client_id, and when it is a program on this computer', async () => {
      const elsewhere = await page(query(cimd.id, 'https://elsewhere.example/cb'));
      expectStatus(elsewhere, 200);
      assert.match(elsewhere.body, new RegExp(`class="cn-warning">The app says it is ${new URL(site.origin).host.replace('.', '\\.')}, but your approval is sent to elsewhere\\.example\\.`));
      const loopback = await page(query(cimd.id, 'http://localhost:33418/callback'));
      expectStatus(loopback, 200);
      assert.match(loopback.body, /class="cn-warning">The approval goes to a program on this computer \(localhost:33418\)/);
    });

    it('refuses before the redirect URI is known good with a 4xx page and no redirect: unknown client, unlisted redirect_uri, bad metadata documents', async () => {
      const bad = (path: string, served: Parameters<MetadataDocumentSite['serve']>[1]) => site.serve(path, served);
      const cases: [string, string, number, RegExp][] = [
        ['c_unknown', 'https://x.example/cb', 400, /unknown client_id/],
        [cimd.id, 'https://not-listed.example/cb', 400, /redirect_uri is not registered/],
        [bad('/other.json', { body: { client_id: `${site.origin}/someone-else.json`, client_name: 'X', redirect_uris: ['https://x.example/cb'] } }), 'https://x.example/cb', 400, /must hold &quot;client_id&quot; equal to its own URL/],
        [bad('/text.json', { body: 'not json at all' }), 'https://x.example/cb', 400, /is not JSON/],
        [bad('/big.json', { body: { client_id: `${site.origin}/big.json`, client_name: 'X', redirect_uris: ['https://x.example/cb'], padding: 'x'.repeat(40_000) } }), 'https://x.example/cb', 400, /at most 32768/],
        ['https://10.1.2.3/client.json', 'https://x.example/cb', 400, /public address/],
      ];
      for (const [clientId, redirectUri, status, pattern] of cases) {
        const res = await page(query(clientId, redirectUri));
        assert.equal(res.statusCode, status, `${clientId}: ${res.body}`);
        assert.equal(res.headers.location, undefined, clientId);
        assert.match(String(res.headers['content-type']), /^text\/html/);
        assert.match(res.body, pattern, clientId);
        assert.match(res.body, /This sign-in link does not work/);
      }
    });

    it('refuses a metadata document that is too slow (the guard\'s 5 s) with a 400 page', { timeout: 20_000 }, async () => {
      const slow = site.serve('/slow.json', { body: { client_id: `${site.origin}/slow.json`, client_name: 'Slow', redirect_uris: ['https://x.example/cb'] }, delayMs: 6000 });
      const res = await page(query(slow, 'https://x.example/cb'));
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.headers.location, undefined);
      assert.match(res.body, /could not be fetched/);
    });

    it('after the redirect URI is known good, errors go to it with error, state and iss: resource missing or with a fragment, plain PKCE, bad scopes, prompt=none', async () => {
      const cases: [Record<string, string | undefined>, string, RegExp][] = [
        [{ resource: undefined }, 'invalid_target', /resource is required/],
        [{ resource: 'https://mcp.example/mcp#frag' }, 'invalid_target', /fragment/],
        [{ resource: '/relative' }, 'invalid_target', /absolute URL/],
        [{ resource: 'ftp://mcp.example/x' }, 'invalid_target', /http: or https:/],
        [{ code_challenge_method: 'plain' }, 'invalid_request', /PKCE/],
        [{ code_challenge: undefined }, 'invalid_request', /PKCE/],
        [{ scope: 'Tools:Read' }, 'invalid_scope', /not a valid scope/],
        [{ scope: Array.from({ length: 21 }, (_, i) => `s${i}`).join(' ') }, 'invalid_scope', /at most 20/],
        [{ resource: undefined, scope: 'profile' }, 'invalid_scope', /openid/],
        [{ prompt: 'none' }, 'consent_required', /prompt=none/],
        [{ response_type: 'token' }, 'unsupported_response_type', /code/],
      ];
      for (const [over, error, pattern] of cases) {
        const loc = redirectOf(await page(query(cimd.id, cimd.redirectUri, over)));
        assert.equal(`${loc.origin}${loc.pathname}`, cimd.redirectUri);
        assert.equal(loc.searchParams.get('error'), error, JSON.stringify(over));
        assert.match(loc.searchParams.get('error_description') ?? '', pattern);
        assert.equal(loc.searchParams.get('state'), 'st-1');
        assert.equal(loc.searchParams.get('iss'), BASE);
        assert.equal(loc.searchParams.get('code'), null);
      }
      // A repeated parameter (two resources) is refused the same way.
      const twice = `${query(cimd.id, cimd.redirectUri)}&resource=${encodeURIComponent('https://other.example/mcp')}`;
      assert.equal(redirectOf(await page(twice)).searchParams.get('error'), 'invalid_request');
    });

    it('approving with the passkey: an app agent (no key) and a grant for the resource, then the redirect with code, state and iss', async () => {
      const q = query(cimd.id, cimd.redirectUri);
      const redirect = await approved(owner, q);
      assert.equal(`${redirect.origin}${redirect.pathname}`, cimd.redirectUri);
      assert.equal(redirect.searchParams.get('state'), 'st-1');
      assert.equal(redirect.searchParams.get('iss'), BASE);
      const c = code(redirect);
      assert.equal(c.resource, 'https://mcp.example/mcp');
      assert.equal(c.site, 'mcp.example');
      assert.deepEqual(c.scopes, ['tools:read', 'tools:write']);
      assert.equal(c.clientId, cimd.id);
      assert.equal(c.redirectUri, cimd.redirectUri);
      assert.equal(c.codeChallenge, new URLSearchParams(q).get('code_challenge'));
      const host = new URL(site.origin).host;
      const app = (await agents(owner)).find((a) => a.id === c.agentId);
      assert.deepEqual(app && { name: app.name, kind: app.kind, client_id: app.client_id, jkt: app.jkt, status: app.status }, { name: `Claude <b> (${host})`, kind: 'app', client_id: cimd.id, jkt: null, status: 'active' });
      const grant = (await grants(owner)).find((g) => g.id === c.grantId);
      assert.deepEqual(grant && { agent: grant.agent_id, site: grant.site, resource: grant.resource, scopes: grant.scopes }, { agent: c.agentId, site: 'mcp.example', resource: 'https://mcp.example/mcp', scopes: ['tools:read', 'tools:write'] });
      const trail = await activity(owner);
      assert.match(trail, /"action":"agent.created"/);
      assert.match(trail, /"action":"app.approved"/);
      const inbox = JSON.stringify(json(await t.app.inject({ url: '/api/notifications', headers: owner.auth })));
      assert.match(inbox, /New agent: Claude <b>/);

      // The second approval of the same client reuses the app: a new resource gets its own grant,
      // the same resource again replaces its grant.
      const other = code(await approved(owner, query(cimd.id, cimd.redirectUri, { resource: 'https://mcp.example/other', scope: 'files:read' })));
      assert.equal(other.agentId, c.agentId);
      assert.notEqual(other.grantId, c.grantId);
      const again = code(await approved(owner, query(cimd.id, cimd.redirectUri, { scope: 'tools:read' })));
      assert.equal(again.agentId, c.agentId);
      const live = (await grants(owner)).filter((g) => g.agent_id === c.agentId).map((g) => [g.resource, g.scopes]);
      assert.deepEqual(live.sort(), [['https://mcp.example/mcp', ['tools:read']], ['https://mcp.example/other', ['files:read']]]);
      assert.equal((await agents(owner)).filter((a) => a.client_id === cimd.id).length, 1, 'one app per client');
    });

    it('a plain openid sign-in needs no resource: the grant is at the redirect URI\'s host, the code carries no resource; the client redeems it', async () => {
      const { verifier, challenge } = pkce();
      const redirect = await approved(owner, query(cimd.id, cimd.redirectUri, { resource: undefined, scope: 'openid profile', code_challenge: challenge }));
      const c = code(redirect);
      const form = { grant_type: 'authorization_code', code: redirect.searchParams.get('code') ?? '', redirect_uri: cimd.redirectUri, code_verifier: verifier, client_id: cimd.id };
      const tokens = await t.app.inject({ method: 'POST', url: '/oidc/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });
      expectStatus(tokens, 200);
      assert.equal(json<{ scope: string }>(tokens).scope, 'openid profile');
      assert.equal(c.resource, null);
      assert.equal(c.site, new URL(cimd.redirectUri).host);
      assert.deepEqual(c.scopes, ['openid', 'profile']);
      assert.deepEqual(c.amr, ['app', 'passkey']);
    });

    it('the longest parameters allowed (2048 characters each) go through the page, the consent id and the code', async () => {
      const long = 's'.repeat(2048);
      const resource = `https://mcp.example/${'r'.repeat(2020)}`;
      const redirect = await approved(owner, query(cimd.id, cimd.redirectUri, { state: long, nonce: 'n'.repeat(2048), resource }));
      assert.equal(redirect.searchParams.get('state'), long);
      assert.equal(code(redirect).resource, resource);
      assert.equal(redirectOf(await page(query(cimd.id, cimd.redirectUri, { nonce: 'n'.repeat(2049) }))).searchParams.get('error'), 'invalid_request');
    });

    it('deny: error=access_denied with state and iss; the pending authorization is answered once', async () => {
      const s = await started(owner, query(cimd.id, cimd.redirectUri, { state: 'st-deny' }));
      const res = await post('/api/oidc/consent/deny', owner, { consent_id: s.consent_id });
      expectStatus(res, 200);
      const loc = new URL(json<{ redirect: string }>(res).redirect);
      assert.equal(`${loc.origin}${loc.pathname}`, cimd.redirectUri);
      assert.equal(loc.searchParams.get('error'), 'access_denied');
      assert.equal(loc.searchParams.get('state'), 'st-deny');
      assert.equal(loc.searchParams.get('iss'), BASE);
      expectStatus(await approve(owner, s), 400);
      expectStatus(await post('/api/oidc/consent/deny', owner, { consent_id: s.consent_id }), 400);
      assert.match(await activity(owner), /"action":"app.denied"/);
    });

    it('of racing answers to one pending authorization exactly one goes through', async () => {
      const twice = await started(owner, query(cimd.id, cimd.redirectUri));
      const assertion = owner.authenticator.assert(twice.options);
      const both = await Promise.all([approve(owner, twice, assertion), approve(owner, twice, assertion)]);
      assert.deepEqual(both.map((r) => r.statusCode).sort(), [200, 401]);
      const raced = await started(owner, query(cimd.id, cimd.redirectUri));
      const answers = await Promise.all([approve(owner, raced), post('/api/oidc/consent/deny', owner, { consent_id: raced.consent_id })]);
      assert.equal(answers.filter((r) => r.statusCode === 200).length, 1, answers.map((r) => `${r.statusCode} ${r.body}`).join(' / '));
    });

    it('is bound to the signed-in owner: another person cannot answer it; signed out is 401; without a passkey 403', async () => {
      const s = await started(owner, query(cimd.id, cimd.redirectUri));
      const stranger = await ownerWithPasskey(t);
      expectStatus(await approve(stranger, s, {}), 400);
      expectStatus(await post('/api/oidc/consent/deny', stranger, { consent_id: s.consent_id }), 400);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/oidc/consent/start', payload: { authorize: query(cimd.id, cimd.redirectUri) } }), 401);
      const noPasskey = await signUp(t.app);
      const res = await start(noPasskey, query(cimd.id, cimd.redirectUri));
      expectStatus(res, 403);
      assert.match(res.body, /needs a passkey/);
      // A start with a request /oidc/authorize refuses: 400, nothing sealed.
      expectStatus(await start(owner, query(cimd.id, cimd.redirectUri, { resource: undefined })), 400);
      expectStatus(await start(owner, query(cimd.id, 'https://not-listed.example/cb')), 400);
      expectStatus(await post('/api/oidc/consent/approve', owner, { consent_id: 'junk', assertion: {} }), 400);
    });

    it('owner clients (c_) and self-registered clients (rc_) work too; a self-registered one is marked and warned about', async () => {
      const created = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: owner.auth, payload: { name: 'Shop MCP', redirect_uris: ['https://shop.example/cb'], public: true } });
      expectStatus(created, 200);
      const ownerClient = json<{ client_id: string }>(created).client_id;
      const plain = await page(query(ownerClient, 'https://shop.example/cb', { resource: 'https://shop.example/mcp' }));
      expectStatus(plain, 200);
      assert.ok(!plain.body.includes('class="cn-warning"'), 'an https redirect URI of an owner\'s client: no warning');
      const c1 = code(await approved(owner, query(ownerClient, 'https://shop.example/cb', { resource: 'https://shop.example/mcp' })));
      assert.equal(c1.clientId, ownerClient);
      assert.equal((await agents(owner)).find((a) => a.id === c1.agentId)?.name, 'Shop MCP (shop.example)');

      const reg = await t.app.inject({ method: 'POST', url: '/oidc/register', remoteAddress: '192.0.2.44', payload: { client_name: 'VS Code', redirect_uris: ['http://127.0.0.1:33418/cb'] } });
      expectStatus(reg, 201);
      const registered = json<{ client_id: string }>(reg).client_id;
      const shown = await page(query(registered, 'http://127.0.0.1:33418/cb'));
      expectStatus(shown, 200);
      assert.match(shown.body, /registered itself with Mandate/);
      assert.match(shown.body, /a program on this computer \(127\.0\.0\.1:33418\)/);
      const c2 = code(await approved(owner, query(registered, 'http://127.0.0.1:33418/cb')));
      assert.equal((await agents(owner)).find((a) => a.id === c2.agentId)?.name, 'VS Code (self-registered)');
    });

    it('a removed app gets a fresh app agent; a revoked grant a fresh grant; a blocked app is refused (409) until unblocked', async () => {
      const first = code(await approved(owner, query(cimd.id, cimd.redirectUri, { resource: 'https://r.example/mcp' })));
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${first.grantId}/revoke`, headers: owner.auth }), 200);
      const regranted = code(await approved(owner, query(cimd.id, cimd.redirectUri, { resource: 'https://r.example/mcp' })));
      assert.equal(regranted.agentId, first.agentId);
      assert.notEqual(regranted.grantId, first.grantId);
      assert.ok((await grants(owner)).some((g) => g.id === regranted.grantId));

      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${first.agentId}/flag`, headers: owner.auth, payload: { flag: 'revoked' } }), 200);
      const blocked = await approve(owner, await started(owner, query(cimd.id, cimd.redirectUri)));
      expectStatus(blocked, 409);
      assert.match(blocked.body, /you blocked/);

      expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${first.agentId}`, headers: owner.auth }), 200);
      const fresh = code(await approved(owner, query(cimd.id, cimd.redirectUri)));
      assert.notEqual(fresh.agentId, first.agentId);
      assert.equal((await agents(owner)).filter((a) => a.client_id === cimd.id).length, 1);
    });

    it('an app never authenticates as an agent: agent JWTs naming it are refused at the token endpoint and at /oidc/authorize', async () => {
      const app = (await agents(owner)).find((a) => a.kind === 'app');
      assert.ok(app);
      const { privateKey } = await generateAgentKeyPair();
      const jwt = await createAgentJwt(privateKey, app.id, { iat: seconds(t.clock.now()) });
      const token = await t.app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: app.id, site: 'mcp.example', agent_jwt: jwt } });
      expectStatus(token, 401);
      assert.match(token.body, /unknown agent/);
      const url = `${BASE}/oidc/authorize?${query(cimd.id, cimd.redirectUri, { resource: undefined, scope: 'openid' })}`;
      const header = await createAgentJwt(privateKey, app.id, { iat: seconds(t.clock.now()), lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu: url });
      const res = await t.app.inject({ url: url.slice(BASE.length), headers: { 'x-service-agent': header } });
      expectStatus(res, 401);
    });

    it('a browser form post to /oidc/authorize is sent to the page with the same query (303)', async () => {
      const q = query(cimd.id, cimd.redirectUri);
      const res = await t.app.inject({ method: 'POST', url: '/oidc/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: q });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `/oidc/authorize?${q}`);
      const huge = await t.app.inject({ method: 'POST', url: '/oidc/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `${q}&x=${'x'.repeat(60_000)}` });
      expectStatus(huge, 400);
      assert.equal(huge.headers.location, undefined);
    });
  });
}

suite('sqlite');
suite('postgres');
