import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { REPO_ROOT } from './helpers/child-process.ts';

// OIDC clients (decisions §18) through the HTTP API: registration, list, change, delete, secret
// rotation and client authentication, every bad input class, and site verification against a local
// HTTP server playing the site (OUTBOUND_ALLOW_LOOPBACK lets the guard reach it over http:).

type Headers = Record<string, string>;
type Owner = { auth: Headers; session_token: string };

interface ClientJson {
  client_id: string;
  client_secret?: string;
  name: string;
  redirect_uris: string[];
  backchannel_logout_uri: string | null;
  public: boolean;
  verified: boolean;
  verified_at: string | null;
  verified_origins: string[];
  verification: { url: string; urls: string[]; line: string };
  secret_set_at: string | null;
  created_at: string;
  updated_at: string;
}

interface CheckJson {
  url: string;
  ok: boolean;
  problem?: string;
  found?: string[];
}

const B64URL_32_BYTES = /^[A-Za-z0-9_-]{43}$/;
const CLIENT_ID = /^c_[a-z2-7]{26}$/;

function api(t: TestApp, owner: Owner | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse> {
  return t.app.inject({ method, url, headers: owner?.auth ?? {}, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
}

async function create(t: TestApp, owner: Owner, body: Record<string, unknown>): Promise<ClientJson> {
  const res = await api(t, owner, 'POST', '/api/oidc/clients', body);
  expectStatus(res, 200);
  return json<ClientJson>(res);
}

async function list(t: TestApp, owner: Owner): Promise<ClientJson[]> {
  const res = await api(t, owner, 'GET', '/api/oidc/clients');
  expectStatus(res, 200);
  return json<ClientJson[]>(res);
}

const detailOf = (res: LightMyRequestResponse): string => String(json<{ detail: unknown }>(res).detail);

function mainFlow(backend: 'sqlite' | 'postgres'): void {
  describe(`OIDC clients (${backend})`, () => {
    let t: TestApp;
    let owner: Owner;
    let other: Owner;
    before(async () => {
      t = await testApp({ backend });
      owner = await signUp(t.app);
      other = await signUp(t.app);
    });
    after(() => t.close());

    it('needs a signed-in owner', async () => {
      for (const [method, url] of [['GET', '/api/oidc/clients'], ['POST', '/api/oidc/clients'], ['PATCH', '/api/oidc/clients/c_aaaaaaaaaaaaaaaaaaaaaaaaaa'], ['DELETE', '/api/oidc/clients/c_aaaaaaaaaaaaaaaaaaaaaaaaaa'], ['POST', '/api/oidc/clients/c_aaaaaaaaaaaaaaaaaaaaaaaaaa/secret'], ['POST', '/api/oidc/clients/c_aaaaaaaaaaaaaaaaaaaaaaaaaa/verify']] as const) {
        const res = await api(t, null, method, url, method === 'GET' || method === 'DELETE' ? undefined : { name: 'x', redirect_uris: ['https://a.example/cb'] });
        expectStatus(res, 401);
      }
      // A cookie request that changes state from another origin is refused (CSRF).
      const res = await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: { cookie: `session=${owner.session_token}`, origin: 'https://evil.example' }, payload: { name: 'x', redirect_uris: ['https://a.example/cb'] } });
      expectStatus(res, 403);
      assert.deepEqual(await list(t, owner), []);
    });

    it('registers a confidential client: its secret once, the verification line, and authenticates with the secret', async () => {
      const c = await create(t, owner, { name: ' Shop ', redirect_uris: ['https://shop.example/cb', 'https://shop.example/cb2?x=1'], backchannel_logout_uri: 'https://shop.example/logout' });
      assert.match(c.client_id, CLIENT_ID);
      assert.match(c.client_secret ?? '', B64URL_32_BYTES);
      assert.equal(c.name, 'Shop', 'the name is trimmed');
      assert.deepEqual(c.redirect_uris, ['https://shop.example/cb', 'https://shop.example/cb2?x=1']);
      assert.equal(c.backchannel_logout_uri, 'https://shop.example/logout');
      assert.equal(c.public, false);
      assert.equal(c.verified, false);
      assert.equal(c.verified_at, null);
      assert.equal(c.verification.url, 'https://shop.example/.well-known/service-site.txt');
      assert.deepEqual(c.verification.urls, ['https://shop.example/.well-known/service-site.txt'], 'one site, however many URIs on it');
      assert.match(c.verification.line, new RegExp(`^mandate-client=${c.client_id}:[A-Za-z0-9_-]{24}$`));
      assert.equal(c.created_at, new Date(t.clock.now()).toISOString());
      assert.equal(c.secret_set_at, c.created_at);

      const [listed] = await list(t, owner);
      assert.ok(listed);
      assert.equal('client_secret' in listed, false, 'the secret is never shown again');
      assert.equal(listed.verification.line, c.verification.line, 'the line is the same every time');

      const secret = c.client_secret!;
      assert.equal((await t.services.oidcClients.authenticateClient(c.client_id, secret))?.id, c.client_id);
      assert.equal(await t.services.oidcClients.authenticateClient(c.client_id, `${secret}x`), undefined);
      assert.equal(await t.services.oidcClients.authenticateClient(c.client_id, ''), undefined);
      assert.equal(await t.services.oidcClients.authenticateClient('c_aaaaaaaaaaaaaaaaaaaaaaaaaa', secret), undefined);
      assert.equal(await t.services.oidcClients.authenticateClient('not an id', secret), undefined);
      const stored = await t.services.store.oidcClients.byId(c.client_id);
      assert.ok(stored?.secretHash && !stored.secretHash.includes(secret), 'only a hash is stored');
    });

    it('registers a public client without a secret; it cannot authenticate with one nor rotate it', async () => {
      const c = await create(t, owner, { name: 'SPA', redirect_uris: ['http://localhost:5173/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]:9/cb', 'https://app.example/cb'], public: true });
      assert.equal('client_secret' in c, false);
      assert.equal(c.public, true);
      assert.equal(c.secret_set_at, null);
      assert.deepEqual(c.verification.urls, ['https://app.example/.well-known/service-site.txt'], 'development redirect URIs are not checked');
      assert.equal(await t.services.oidcClients.authenticateClient(c.client_id, ''), undefined);
      const res = await api(t, owner, 'POST', `/api/oidc/clients/${c.client_id}/secret`);
      expectStatus(res, 409);
      assert.match(detailOf(res), /public client has no secret/);
    });

    it('changes name, redirect URIs and logout URI', async () => {
      const c = await create(t, owner, { name: 'Old', redirect_uris: ['https://old.example/cb'] });
      t.clock.advance(1000);
      let res = await api(t, owner, 'PATCH', `/api/oidc/clients/${c.client_id}`, { name: 'New', redirect_uris: ['https://new.example/a', 'https://new.example/b'], backchannel_logout_uri: 'https://new.example/bcl' });
      expectStatus(res, 200);
      let p = json<ClientJson>(res);
      assert.equal(p.name, 'New');
      assert.deepEqual(p.redirect_uris, ['https://new.example/a', 'https://new.example/b']);
      assert.equal(p.backchannel_logout_uri, 'https://new.example/bcl');
      assert.equal(p.verification.url, 'https://new.example/.well-known/service-site.txt');
      assert.equal(p.verification.line, c.verification.line);
      assert.equal(p.updated_at, new Date(t.clock.now()).toISOString());
      assert.equal(p.created_at, c.created_at);
      res = await api(t, owner, 'PATCH', `/api/oidc/clients/${c.client_id}`, { backchannel_logout_uri: null });
      expectStatus(res, 200);
      p = json<ClientJson>(res);
      assert.equal(p.backchannel_logout_uri, null);
      assert.equal(p.name, 'New', 'fields not sent stay');
      const listed = (await list(t, owner)).find((x) => x.client_id === c.client_id);
      assert.deepEqual(listed, p);
    });

    it('rotates the secret: the new one works, the old one stops at once', async () => {
      const c = await create(t, owner, { name: 'Rotating', redirect_uris: ['https://rot.example/cb'] });
      t.clock.advance(5000);
      const res = await api(t, owner, 'POST', `/api/oidc/clients/${c.client_id}/secret`);
      expectStatus(res, 200);
      const { client_id, client_secret } = json<{ client_id: string; client_secret: string }>(res);
      assert.equal(client_id, c.client_id);
      assert.match(client_secret, B64URL_32_BYTES);
      assert.notEqual(client_secret, c.client_secret);
      assert.equal(await t.services.oidcClients.authenticateClient(c.client_id, c.client_secret!), undefined);
      assert.equal((await t.services.oidcClients.authenticateClient(c.client_id, client_secret))?.id, c.client_id);
      const listed = (await list(t, owner)).find((x) => x.client_id === c.client_id);
      assert.equal(listed?.secret_set_at, new Date(t.clock.now()).toISOString());
    });

    it("another owner's client is 404 everywhere, and not in their list", async () => {
      const c = await create(t, owner, { name: 'Mine', redirect_uris: ['https://mine.example/cb'] });
      assert.deepEqual(await list(t, other), []);
      for (const [method, url, body] of [
        ['PATCH', `/api/oidc/clients/${c.client_id}`, { name: 'Stolen' }],
        ['DELETE', `/api/oidc/clients/${c.client_id}`, undefined],
        ['POST', `/api/oidc/clients/${c.client_id}/secret`, undefined],
        ['POST', `/api/oidc/clients/${c.client_id}/verify`, undefined],
        ['PATCH', '/api/oidc/clients/c_aaaaaaaaaaaaaaaaaaaaaaaaaa', { name: 'x' }],
        ['DELETE', '/api/oidc/clients/ag_aaaaaaaaaaaaaaaaaaaaaaaaaa', undefined],
      ] as const) {
        const res = await api(t, other, method, url, body);
        expectStatus(res, 404);
        assert.equal(detailOf(res), 'client not found');
      }
      assert.equal((await list(t, owner)).find((x) => x.client_id === c.client_id)?.name, 'Mine');
      assert.equal(await t.services.oidcClients.authenticateClient(c.client_id, c.client_secret!).then((r) => r?.id), c.client_id, 'the secret still works');
    });

    it('deletes: the client id and secret stop working', async () => {
      const c = await create(t, owner, { name: 'Gone', redirect_uris: ['https://gone.example/cb'] });
      expectStatus(await api(t, owner, 'DELETE', `/api/oidc/clients/${c.client_id}`), 200);
      expectStatus(await api(t, owner, 'DELETE', `/api/oidc/clients/${c.client_id}`), 404);
      expectStatus(await api(t, owner, 'PATCH', `/api/oidc/clients/${c.client_id}`, { name: 'x' }), 404);
      assert.equal((await list(t, owner)).some((x) => x.client_id === c.client_id), false);
      assert.equal(await t.services.oidcClients.authenticateClient(c.client_id, c.client_secret!), undefined);
    });
  });
}

mainFlow('sqlite');
mainFlow('postgres');

describe('OIDC clients: bad input', () => {
  let t: TestApp;
  let owner: Owner;
  before(async () => {
    t = await testApp();
    owner = await signUp(t.app);
  });
  after(() => t.close());

  const ok = { name: 'Shop', redirect_uris: ['https://shop.example/cb'] };

  it('refuses each bad redirect URI with a 400 naming it and the rule', async () => {
    const cases: [string[], RegExp][] = [
      [['http://shop.example/cb'], /^redirect_uris\[0\] must be an https: URL \(http: only for http:\/\/localhost/],
      [['https://shop.example/cb', 'http://10.0.0.1/cb'], /^redirect_uris\[1\] must be an https: URL/],
      [['http://localhost.evil.example/cb'], /^redirect_uris\[0\] must be an https: URL/],
      [['https://shop.example/cb#frag'], /^redirect_uris\[0\] must not contain a fragment/],
      [['https://shop.example/cb#'], /must not contain a fragment/],
      [['javascript:alert(1)'], /must be an https: URL/],
      [['data:text/html,hi'], /must be an https: URL/],
      [['https://*.shop.example/cb'], /must not contain wildcards/],
      [['https://shop.example/*'], /must not contain wildcards/],
      [['/callback'], /must be an absolute URL/],
      [['shop.example/cb'], /must be an absolute URL/],
      [['https://user:pw@shop.example/cb'], /must not contain a user name or password/],
      [['https://shop.example/c b'], /must be printable ASCII without spaces/],
      [['https://shop.example/caf\u00e9'], /must be printable ASCII/],
      [[' https://shop.example/cb'], /must be printable ASCII/],
      [['https://shop.example/cb', 'https://shop.example/x', 'https://shop.example/cb'], /^redirect_uris\[2\] repeats redirect_uris\[0\]/],
    ];
    for (const [uris, detail] of cases) {
      const res = await api(t, owner, 'POST', '/api/oidc/clients', { ...ok, redirect_uris: uris });
      expectStatus(res, 400);
      assert.match(detailOf(res), detail, JSON.stringify(uris));
    }
    assert.deepEqual(await list(t, owner), [], 'nothing was registered');
  });

  it('refuses malformed bodies with a 422 naming the field', async () => {
    const cases: [Record<string, unknown>, (string | number)[], string][] = [
      [{ ...ok, redirect_uris: [] }, ['body', 'redirect_uris'], 'minItems'],
      [{ ...ok, redirect_uris: Array.from({ length: 11 }, (_, i) => `https://shop.example/${i}`) }, ['body', 'redirect_uris'], 'maxItems'],
      [{ ...ok, redirect_uris: [`https://shop.example/${'a'.repeat(2000)}`] }, ['body', 'redirect_uris', 0], 'maxLength'],
      [{ ...ok, redirect_uris: 'https://shop.example/cb' }, ['body', 'redirect_uris'], 'array_type'],
      [{ ...ok, name: 'x'.repeat(101) }, ['body', 'name'], 'maxLength'],
      [{ ...ok, name: '' }, ['body', 'name'], 'minLength'],
      [{ redirect_uris: ok.redirect_uris }, ['body', 'name'], 'missing'],
      [{ ...ok, public: 'yes' }, ['body', 'public'], 'boolean_type'],
      [{ ...ok, grant_types: ['client_credentials'] }, ['body', 'grant_types'], 'extra_forbidden'],
      [{ ...ok, backchannel_logout_uri: 'x'.repeat(3000) }, ['body', 'backchannel_logout_uri'], 'maxLength'],
    ];
    for (const [body, loc, type] of cases) {
      const res = await api(t, owner, 'POST', '/api/oidc/clients', body);
      expectStatus(res, 422);
      const items = json<{ detail: { loc: (string | number)[]; type: string }[] }>(res).detail;
      assert.ok(items.some((i) => JSON.stringify(i.loc) === JSON.stringify(loc) && i.type === type), `${JSON.stringify(body).slice(0, 80)}: ${res.body}`);
    }
  });

  it('refuses a blank name and a logout URI the outbound guard would not fetch', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...ok, name: '   ' }, /^name must be 1 to 100 characters/],
      [{ ...ok, name: 'a\u0007b' }, /^name must not contain control characters/],
      [{ ...ok, backchannel_logout_uri: 'http://shop.example/bcl' }, /^backchannel_logout_uri must be an https: URL/],
      [{ ...ok, backchannel_logout_uri: 'https://10.0.0.1/bcl' }, /^backchannel_logout_uri must point to a public address: 10\.0\.0\.1 is not a public address \(private\)/],
      [{ ...ok, backchannel_logout_uri: 'https://localhost/bcl' }, /must point to a public address, not localhost/],
      [{ ...ok, backchannel_logout_uri: 'https://shop.example/bcl#x' }, /must not contain a fragment/],
      [{ ...ok, backchannel_logout_uri: 'not a url' }, /must be a complete URL/],
    ];
    for (const [body, detail] of cases) {
      const res = await api(t, owner, 'POST', '/api/oidc/clients', body);
      expectStatus(res, 400);
      assert.match(detailOf(res), detail);
    }
  });

  it('refuses bad changes the same way, and an empty one', async () => {
    const c = await create(t, owner, ok);
    const url = `/api/oidc/clients/${c.client_id}`;
    let res = await api(t, owner, 'PATCH', url, {});
    expectStatus(res, 400);
    assert.match(detailOf(res), /nothing to change/);
    res = await api(t, owner, 'PATCH', url, { redirect_uris: ['https://shop.example/cb#x'] });
    expectStatus(res, 400);
    assert.match(detailOf(res), /fragment/);
    res = await api(t, owner, 'PATCH', url, { public: true });
    expectStatus(res, 422, );
    assert.match(res.body, /extra_forbidden/, 'a client cannot change kind');
    res = await api(t, owner, 'PATCH', url, { backchannel_logout_uri: 'http://shop.example/bcl' });
    expectStatus(res, 400);
    const [after] = await list(t, owner);
    assert.deepEqual(after, (({ client_secret: _s, ...rest }) => rest)(c), 'nothing changed');
    expectStatus(await api(t, owner, 'DELETE', url), 200);
  });

  it('allows at most 50 clients per owner (409), and one more after a deletion', async () => {
    const busy = await signUp(t.app);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push((await create(t, busy, { name: `Site ${i}`, redirect_uris: [`https://s${i}.example/cb`] })).client_id);
    const res = await api(t, busy, 'POST', '/api/oidc/clients', ok);
    expectStatus(res, 409);
    assert.match(detailOf(res), /you have 50 OIDC clients, the most an account may have/);
    expectStatus(await api(t, busy, 'DELETE', `/api/oidc/clients/${ids[0]}`), 200);
    await create(t, busy, ok);
    assert.equal((await list(t, busy)).length, 50);
  });
});

/** A local HTTP server playing the site: answers with `respond`, records every request. */
interface SiteStandIn {
  port: number;
  requests: { host: string; path: string }[];
  respond: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  close(): Promise<void>;
}

async function startSite(): Promise<SiteStandIn> {
  const site: SiteStandIn = {
    port: 0,
    requests: [],
    respond: (_req, res) => void res.writeHead(404).end(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    site.requests.push({ host: req.headers.host ?? '', path: req.url ?? '' });
    if (req.method !== 'GET') return void res.writeHead(405).end();
    site.respond(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  site.port = address.port;
  return site;
}

const serveText = (text: string) => (req: http.IncomingMessage, res: http.ServerResponse): void => {
  if (req.url !== '/.well-known/service-site.txt') return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
};

async function verifyRes(t: TestApp, owner: Owner, clientId: string): Promise<LightMyRequestResponse> {
  return api(t, owner, 'POST', `/api/oidc/clients/${clientId}/verify`);
}

describe('OIDC clients: site verification (OUTBOUND_ALLOW_LOOPBACK on)', () => {
  let t: TestApp;
  let owner: Owner;
  let site: SiteStandIn;
  let c: ClientJson;
  let fileUrl: string;
  before(async () => {
    site = await startSite();
    t = await testApp({ env: { OUTBOUND_ALLOW_LOOPBACK: 'true' } });
    owner = await signUp(t.app);
    c = await create(t, owner, { name: 'Local shop', redirect_uris: [`http://127.0.0.1:${site.port}/cb`] });
    fileUrl = `http://127.0.0.1:${site.port}/.well-known/service-site.txt`;
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  async function failure(): Promise<{ detail: string; checks: CheckJson[]; line: string }> {
    const res = await verifyRes(t, owner, c.client_id);
    expectStatus(res, 400);
    const body = json<{ detail: string; checks: CheckJson[]; line: string }>(res);
    assert.equal(body.line, c.verification.line);
    assert.ok(body.detail.includes(`Put this line, on a line of its own, in ${fileUrl}: ${c.verification.line}`), body.detail);
    assert.equal((await list(t, owner))[0]?.verified, false, 'a failed check verifies nothing');
    return body;
  }

  it('names the file to create when there is none (404)', async () => {
    assert.equal(c.verification.url, fileUrl);
    site.requests.length = 0;
    const { detail, checks } = await failure();
    assert.match(detail, new RegExp(`^site not verified: ${fileUrl.replace(/[.]/g, '\\.')} answered 404: there is no file there yet`));
    assert.deepEqual(checks, [{ url: fileUrl, ok: false, problem: `${fileUrl} answered 404: there is no file there yet`, found: [] }]);
    assert.deepEqual(site.requests, [{ host: `127.0.0.1:${site.port}`, path: '/.well-known/service-site.txt' }]);
  });

  it('shows what it found when the token or the client differs', async () => {
    site.respond = serveText(`mandate-client=${c.client_id}:wrongtoken\n`);
    let body = await failure();
    assert.match(body.detail, new RegExp(`has a line for ${c.client_id} but with another token \\(found mandate-client=${c.client_id}:wrongtoken\\)`));
    assert.deepEqual(body.checks[0]?.found, [`mandate-client=${c.client_id}:wrongtoken`]);

    site.respond = serveText('mandate-client=c_someoneelse:tok\nhello\n');
    body = await failure();
    assert.match(body.detail, /has no line for c_[a-z2-7]+, only for other clients \(found mandate-client=c_someoneelse:tok\)/);

    site.respond = serveText(`the line is mandate-client=${c.client_id}:${c.verification.line.split(':')[1]} but not on its own\n`);
    body = await failure();
    assert.match(body.detail, /holds no mandate-client= line/);
  });

  it('does not follow a redirect', async () => {
    site.requests.length = 0;
    site.respond = (req, res) => {
      if (req.url === '/.well-known/service-site.txt') return void res.writeHead(302, { location: '/elsewhere.txt' }).end();
      res.writeHead(200).end(`${c.verification.line}\n`);
    };
    const { detail } = await failure();
    assert.match(detail, /answered 302, a redirect to \/elsewhere\.txt; redirects are not followed, so serve the file at exactly this address/);
    assert.deepEqual(site.requests.map((r) => r.path), ['/.well-known/service-site.txt'], 'the redirect target was never fetched');
  });

  it('refuses a body over 64 kB, even when the line is in it', async () => {
    site.respond = serveText(`${c.verification.line}\n${'#'.repeat(70_000)}\n`);
    const { detail } = await failure();
    assert.match(detail, /larger than 65536 bytes/);
  });

  it('reports other failing answers', async () => {
    site.respond = (_req, res) => void res.writeHead(500).end('oops');
    const { detail } = await failure();
    assert.match(detail, /answered 500; it must answer 200 with the file/);
  });

  it('verifies when the file holds the line on a line of its own', async () => {
    t.clock.advance(60_000);
    site.respond = serveText(`\ufeff# Mandate clients of this site\r\nmandate-client=c_other:x\r\n  ${c.verification.line}  \r\n`);
    const res = await verifyRes(t, owner, c.client_id);
    expectStatus(res, 200);
    const v = json<ClientJson & { checks: CheckJson[] }>(res);
    assert.equal(v.verified, true);
    assert.equal(v.verified_at, new Date(t.clock.now()).toISOString());
    assert.deepEqual(v.verified_origins, [`http://127.0.0.1:${site.port}`]);
    assert.deepEqual(v.checks, [{ url: fileUrl, ok: true }]);
    const [listed] = await list(t, owner);
    assert.equal(listed?.verified, true);
    assert.equal(listed?.verified_at, v.verified_at);

    // A later failed check (the site is briefly down) leaves it verified.
    site.respond = (_req, res) => void res.writeHead(503).end();
    expectStatus(await verifyRes(t, owner, c.client_id), 400);
    assert.equal((await list(t, owner))[0]?.verified, true);
  });

  it('checks every site of the redirect URIs; a new site needs a fresh check, a removed one keeps the rest verified', async () => {
    const two = await create(t, owner, { name: 'Two sites', redirect_uris: [`http://127.0.0.1:${site.port}/cb`, `http://localhost:${site.port}/cb`, `http://localhost:${site.port}/other`] });
    const urls = [`http://127.0.0.1:${site.port}/.well-known/service-site.txt`, `http://localhost:${site.port}/.well-known/service-site.txt`];
    assert.deepEqual(two.verification.urls, urls);
    // Only the 127.0.0.1 site publishes the line.
    site.respond = (req, res) => {
      if (req.headers.host?.startsWith('127.0.0.1')) return serveText(`${two.verification.line}\n`)(req, res);
      res.writeHead(404).end();
    };
    let res = await verifyRes(t, owner, two.client_id);
    expectStatus(res, 400);
    const body = json<{ detail: string; checks: CheckJson[] }>(res);
    assert.deepEqual(body.checks.map((x) => x.ok), [true, false]);
    assert.match(body.detail, new RegExp(`in ${urls[1]!.replace(/[.]/g, '\\.')}: mandate-client=`));

    site.respond = serveText(`${two.verification.line}\n`);
    res = await verifyRes(t, owner, two.client_id);
    expectStatus(res, 200);
    assert.deepEqual(json<ClientJson>(res).verified_origins, [`http://127.0.0.1:${site.port}`, `http://localhost:${site.port}`]);

    res = await api(t, owner, 'PATCH', `/api/oidc/clients/${two.client_id}`, { redirect_uris: [`http://localhost:${site.port}/cb`] });
    expectStatus(res, 200);
    let p = json<ClientJson>(res);
    assert.equal(p.verified, true, 'the remaining site stays verified');
    assert.deepEqual(p.verified_origins, [`http://localhost:${site.port}`]);

    res = await api(t, owner, 'PATCH', `/api/oidc/clients/${two.client_id}`, { redirect_uris: [`http://localhost:${site.port}/cb`, 'https://new-site.example/cb'] });
    p = json<ClientJson>(res);
    assert.equal(p.verified, false, 'a new site is not verified until checked');
    assert.equal(p.verified_at, null);

    res = await api(t, owner, 'PATCH', `/api/oidc/clients/${two.client_id}`, { redirect_uris: [`http://127.0.0.1:${site.port}/cb`] });
    p = json<ClientJson>(res);
    assert.equal(p.verified, false, 'a site removed and added back needs a fresh check');
    assert.deepEqual(p.verified_origins, []);
  });

  it('limits checks to 30 per owner per hour (429)', async () => {
    const busy = await signUp(t.app);
    const x = await create(t, busy, { name: 'Busy', redirect_uris: [`http://127.0.0.1:${site.port}/cb`] });
    site.respond = (_req, res) => void res.writeHead(404).end();
    for (let i = 0; i < 30; i++) expectStatus(await verifyRes(t, busy, x.client_id), 400);
    const res = await verifyRes(t, busy, x.client_id);
    expectStatus(res, 429);
    assert.ok(Number(res.headers['retry-after']) > 0);
  });
});

describe('OIDC clients: site verification (OUTBOUND_ALLOW_LOOPBACK off, as in production)', () => {
  let t: TestApp;
  let owner: Owner;
  let site: SiteStandIn;
  before(async () => {
    site = await startSite();
    t = await testApp();
    owner = await signUp(t.app);
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  it('refuses to fetch loopback and private addresses, naming why', async () => {
    const cases: [string, RegExp][] = [
      [`https://127.0.0.1:${site.port}/cb`, /could not fetch https:\/\/127\.0\.0\.1:\d+\/\.well-known\/service-site\.txt: .*127\.0\.0\.1 is not a public address \(loopback\)/],
      ['https://10.0.0.7/cb', /10\.0\.0\.7 is not a public address \(private\)/],
      ['https://[::ffff:192.168.1.1]/cb', /not a public address \(IPv4-mapped form of 192\.168\.1\.1, private\)/],
      [`https://localhost:${site.port}/cb`, /must point to a public address, not localhost/],
    ];
    site.respond = serveText('anything');
    site.requests.length = 0;
    for (const [uri, detail] of cases) {
      const c = await create(t, owner, { name: 'Private', redirect_uris: [uri] });
      const res = await verifyRes(t, owner, c.client_id);
      expectStatus(res, 400);
      assert.match(detailOf(res), detail);
      assert.equal(json<{ checks: CheckJson[] }>(res).checks[0]?.ok, false);
    }
    assert.deepEqual(site.requests, [], 'nothing reached the local server');
  });

  it('has nothing to verify for development redirect URIs alone', async () => {
    const c = await create(t, owner, { name: 'Dev', redirect_uris: [`http://127.0.0.1:${site.port}/cb`, 'http://localhost:3000/cb'] });
    assert.deepEqual(c.verification.urls, []);
    assert.equal(c.verification.url, `http://127.0.0.1:${site.port}/.well-known/service-site.txt`);
    const res = await verifyRes(t, owner, c.client_id);
    expectStatus(res, 400);
    assert.match(detailOf(res), /only development redirect URIs .* there is no public site to verify/);
  });
});

describe('docs/sites/oidc.md', () => {
  it('shows a curl call for every client route, and the file and line of the verification', async () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/sites/oidc.md'), 'utf8');
    const curls = doc.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.startsWith('curl '));
    const t = await testApp();
    try {
      const spec = json<{ paths: Record<string, Record<string, unknown>> }>(await t.app.inject({ url: '/openapi.json' }));
      const routes = Object.entries(spec.paths).filter(([p]) => p.startsWith('/api/oidc/clients')).flatMap(([p, ms]) => Object.keys(ms).map((m) => [m.toUpperCase(), p.replace('{cid}', '$CLIENT_ID')] as const));
      assert.equal(routes.length, 6);
      for (const [method, path] of routes) {
        const shown = curls.some((c) => c.includes(`"$MANDATE${path}"`) && (method === 'GET' ? !c.includes(' -X ') && !c.includes(' -d ') : c.includes(`-X ${method} `) || (method === 'POST' && c.includes(' -d '))));
        assert.ok(shown, `docs/sites/oidc.md shows no curl call for ${method} ${path}`);
      }
      assert.ok(doc.includes('/.well-known/service-site.txt'));
      assert.match(doc, /^mandate-client=c_[a-z2-7]{26}:[A-Za-z0-9_-]{24}$/m);
    } finally {
      await t.close();
    }
  });
});
