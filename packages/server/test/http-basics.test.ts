import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';
import { startIdentityProviderStandIn, type IdentityProviderStandIn } from './helpers/stand-ins/identity-provider.ts';

// The walk runs with an identity provider configured (a real OpenID Provider on loopback), so the
// routes under /api/oauth/{provider} and /api/txn/{txn_id}/oauth/{provider} get their bad input with
// a provider they know, not only "unknown provider".
const PROVIDER = 'google';
async function identityProvider(): Promise<{ stand: IdentityProviderStandIn; env: Record<string, string> }> {
  const stand = await startIdentityProviderStandIn({ redirectUris: [`http://localhost:8080/api/oauth/${PROVIDER}/callback`] });
  return { stand, env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OAUTH_PROVIDERS: PROVIDER, ...stand.env(PROVIDER) } };
}

describe('cross-cutting HTTP behaviour', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  let issuer: IdentityProviderStandIn;
  before(async () => {
    const idp = await identityProvider();
    issuer = idp.stand;
    t = await testApp({ env: { BODY_LIMIT_BYTES: '4096', ...idp.env } });
    auth = (await signUp(t.app)).auth;
  });
  after(async () => {
    await t.close();
    await issuer.stop();
  });

  it('answers unknown routes with 404 {detail}', async () => {
    const res = await t.app.inject({ url: '/api/nope' });
    assert.equal(res.statusCode, 404);
    assert.equal(typeof json<{ detail: string }>(res).detail, 'string');
  });

  it('answers broken JSON with 422 in the validation shape', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/users', headers: { 'content-type': 'application/json' }, payload: '{"email": ' });
    assert.equal(res.statusCode, 422);
    const body = json<{ detail: { loc: string[]; msg: string; type: string }[] }>(res);
    assert.deepEqual(body.detail[0]?.loc, ['body']);
    assert.equal(body.detail[0]?.type, 'json_invalid');
  });

  it('refuses a NUL character anywhere in a JSON body, saying where; a blank body is no body', async () => {
    const cases: [string, string][] = [
      ['{"email":"a\\u0000@b.c","password":"p"}', 'body.email'], // a flat body (the quick check)
      ['{"a\\u0000":1}', 'body.a'], // in a key
      ['{"nested":{"x":["ok","n\\u0000"]}}', 'body.nested.x.1'], // deeper (the walk)
    ];
    for (const [payload, where] of cases) {
      const res = await t.app.inject({ method: 'POST', url: '/api/users', headers: { 'content-type': 'application/json' }, payload });
      assert.equal(res.statusCode, 422, payload);
      assert.ok(res.body.includes(`NUL character (\\\\u0000) at ${where}`), res.body);
    }
    const blank = await t.app.inject({ method: 'POST', url: '/api/users', headers: { 'content-type': 'application/json' }, payload: ' \n ' });
    assert.equal(blank.statusCode, 422);
    // Read as no body at all (the schema then wants an object), not as broken JSON.
    assert.deepEqual(json<{ detail: { loc: string[]; type: string }[] }>(blank).detail.map((d) => `${d.loc.join('.')}:${d.type}`), ['body:object_type']);
  });

  it('answers wrong types and missing fields with 422 naming each field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 42 } });
    assert.equal(res.statusCode, 422);
    const locs = json<{ detail: { loc: string[]; type: string }[] }>(res).detail.map((d) => `${d.loc.join('.')}:${d.type}`);
    assert.ok(locs.includes('body.password:missing'), locs.join());
    assert.ok(locs.some((l) => l.startsWith('body.email:')), locs.join());
  });

  it('answers a huge body with 413 and an unknown content type with 415', async () => {
    const huge = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 'a@b.c', password: 'x'.repeat(10_000) } });
    assert.equal(huge.statusCode, 413);
    assert.match(json<{ detail: string }>(huge).detail, /too large/);
    const xml = await t.app.inject({ method: 'POST', url: '/api/users', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
    assert.equal(xml.statusCode, 415);
  });

  it('sets security headers and a request id', async () => {
    const res = await t.app.inject({ url: '/api/healthz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), { status: 'ok', database: 'sqlite' });
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const page = await t.app.inject({ url: '/app' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
  });

  it('describes itself at /openapi.json, version 0.1.0, with every route', async () => {
    const spec = json<{ openapi: string; info: { version: string }; paths: Record<string, unknown> }>(await t.app.inject({ url: '/openapi.json' }));
    assert.equal(spec.info.version, '0.1.0');
    for (const p of ['/api/users', '/api/login', '/api/logout', '/api/me', '/api/agents', '/api/agents/{agent_id}', '/api/agents/{agent_id}/flag', '/api/v1/jwks', '/api/admin/keys/rotate', '/api/healthz', '/api/devices', '/api/webauthn/register/options']) {
      assert.ok(spec.paths[p], `missing ${p}`);
    }
  });

  it('never answers bad input on any route with a 5xx (SQLite)', async () => {
    await walkEveryRoute(t, auth);
  });
});

describe('cross-cutting HTTP behaviour on PostgreSQL', () => {
  let t: TestApp;
  let auth: Record<string, string>;
  let issuer: IdentityProviderStandIn;
  before(async () => {
    const idp = await identityProvider();
    issuer = idp.stand;
    t = await testApp({ backend: 'postgres', env: idp.env });
    auth = (await signUp(t.app)).auth;
  });
  after(async () => {
    await t.close();
    await issuer.stop();
  });

  it('never answers bad input on any route with a 5xx (PostgreSQL)', async () => {
    await walkEveryRoute(t, auth);
  });
});

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
/** A body naming most fields of the API, each malformed. */
const EVERY_FIELD = JSON.stringify({
  agent_id: 'ag_x', site: 'x'.repeat(300), scopes: ['A', 'b c'], agent_jwt: 'a.b.c', access_token: 'x', dpop: 'y', method: 'GET', url: 'not a url',
  stepup_token: 'z', refresh_token: '', action: '\u202e', kind: 'fraud', text: 'x', status: 'x', approve: true, assertion: {}, limits: { expires_in: -1, max_uses: 0 },
  user_info: ['user:ssn'], flag: 'revoked', jwk: { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) },
});
/** An unsigned agent JWT whose iss/sub hold a NUL: must be refused before any lookup. */
const UNSIGNED_NUL_AGENT_JWT = `${b64({ alg: 'ES256' })}.${b64({ iss: 'ag_\u0000', sub: 'ag_\u0000', type: 'agent', iat: 1, exp: 2 })}.AAAA`;
/** Broken credentials of every kind: read before any body is. */
const BROKEN_CREDENTIALS: Record<string, string>[] = [
  { authorization: 'Bearer \u00ff garbage' },
  { cookie: 'session=' + 'z'.repeat(4000) },
  { 'x-agent-jwt': 'a.b.c', 'if-none-match': '"\u0000"', origin: 'null', 'sec-fetch-site': 'cross-site' },
  { 'x-agent-jwt': UNSIGNED_NUL_AGENT_JWT },
];

/**
 * Walks every route of the OpenAPI description with malformed bodies, ids, queries and credentials:
 * every answer must be a 4xx (or 2xx) with a `detail`, never a 5xx.
 */
async function walkEveryRoute(t: TestApp, auth: Record<string, string>): Promise<void> {
  const spec = json<{ paths: Record<string, Record<string, unknown>> }>(await t.app.inject({ url: '/openapi.json' }));
  const badBodies: (string | undefined)[] = [
    '{', 'null', '[]', '"text"', '123', 'true', '{"a":', JSON.stringify({ email: [], password: {}, name: 1, jwk: 'x', flag: null, challenge: 5, attestation: [], assertion: 'x' }),
    JSON.stringify({ name: 'x'.repeat(5000) }), '\u0000\u0001', JSON.stringify({ jwk: { kty: 'EC', crv: 'P-256', x: '!!', y: '??' }, name: 'n' }),
    JSON.stringify({ display_name: '' }), undefined,
  JSON.stringify({ email: 'a\u0000@b.c', password: 'pass\u0000word', name: 'n\u0000', display_name: 'd\u0000', text: 't\u0000', status: 's\u0000', detail: 'x\u0000', challenge: 'c\u0000', site: 's\u0000' }),
  JSON.stringify({ approve: false, limits: { max_uses: 3_000_000_000, expires_in: 1e300 }, scopes: ['list'], user_info: [] }),
  JSON.stringify({ approve: true, limits: { max_uses: 2147483648 }, assertion: { id: 'x\u0000' } }),
    EVERY_FIELD,
    JSON.stringify({ agent_id: 'ag_' + 'a'.repeat(26), site: 'shop.example', scopes: Array.from({ length: 1000 }, (_, i) => `s${i}`), agent_jwt: 'e30.e30.e30', user_info: [] }),
    JSON.stringify({ access_token: 'eyJhbGciOiJub25lIn0.e30.', dpop: 'eyJhbGciOiJub25lIn0.e30.', method: 'POST', url: 'https://a.example/x', site: 'a.example', action: 'pay' }),
    // The details binding (decisions §29): `details` of step-ups and agent approvals, `details_digest` of the verify endpoints.
    JSON.stringify({ agent_id: 'ag_' + 'a'.repeat(26), site: 'shop.example', action: 'pay', agent_jwt: 'e30.e30.e30', details: { summary: 'a\u202eb', digest: 'A'.repeat(42) + '=', extra: [] }, stepup_token: 'e30.e30.e30', access_token: 'x', details_digest: 'A'.repeat(44) }),
    JSON.stringify({ agent_id: 'ag_' + 'a'.repeat(26), site: 'shop.example', action: 'pay', agent_jwt: 'e30.e30.e30', details: 'Pay', stepup_token: 'e30.e30.e30', details_digest: { digest: 42 } }),
    JSON.stringify({ site: 'shop.example', action: 'pay', details: { summary: 'x'.repeat(4001), digest: 'x'.repeat(201), label: 7 }, details_digest: null }),
    // The app consent page's calls (decisions §28): a query that is not one, and sealed ids that are not.
    JSON.stringify({ authorize: 'client_id=https%3A%2F%2F10.0.0.1%2Fx.json&redirect_uri=%00&resource=%23', consent_id: 'x'.repeat(40_001), assertion: { id: 'x', response: {} } }),
    JSON.stringify({ authorize: 7, consent_id: 'AAAA', assertion: null }),
  ];
  const badIds = ['x', 'ag_' + 'a'.repeat(300), '%00', '..%2F..', 'ag_%F0%9F%92%A9', 'dev_!!', ' ', 'u_', '%E0%A4%A', 't_aaaaaaaaaaaaaaaaaaaaaaaaaa'];
  const checked: string[] = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const method of Object.keys(methods)) {
      // A {provider} also gets the configured one, with bad values for the other parameters.
      const knownQueries = ['', '?code=%00&state=%00', '?state=a&state=b&code=1&code=2', `?code=${'x'.repeat(5000)}&state=y`, '?error=access_denied&state=%E0%A4%A', '?error=%00&error_description=%FF'];
      const withKnownProvider = path.includes('{provider}')
        ? [...new Set(badIds.map((id) => path.replace('{provider}', PROVIDER).replace(/\{[^}]+\}/g, id)))].flatMap((u) => knownQueries.map((q) => u + q))
        : [];
      // The site step-up's long poll also gets bad `wait` values (a valid one would only wait).
      const waits = path === '/api/v1/stepup/site/{txn_id}' ? ['?wait=-1', '?wait=26', '?wait=1e300', '?wait=%00', '?wait=0&wait=1', '?wait=%E0%A4%A'].map((q) => path.replace('{txn_id}', 't_aaaaaaaaaaaaaaaaaaaaaaaaaa') + q) : [];
      // A person's browser at /oidc/authorize (no agent header): bad clients, redirect URIs, resources, PKCE.
      const authorizeQueries = path === '/oidc/authorize' ? [
        '?client_id=c_unknown&redirect_uri=https%3A%2F%2Fx.example%2Fcb&response_type=code&resource=https%3A%2F%2Fmcp.example%2F%23frag&code_challenge_method=plain',
        '?client_id=https%3A%2F%2F10.0.0.1%2Fclient.json&redirect_uri=https%3A%2F%2Fx.example%2Fcb',
        '?client_id=https%3A%2F%2Fclient.example%2F..%2Fx.json&redirect_uri=%00',
        '?client_id=http%3A%2F%2Fclient.example%2Fx.json#frag',
        '?client_id=rc_x&client_id=rc_y&resource=a&resource=b',
        `?client_id=${'x'.repeat(5000)}&state=${'s'.repeat(3000)}`,
        '?client_id=%E0%A4%A&redirect_uri=%FF&scope=%00',
      ].map((q) => path + q) : [];
      const urls = path.includes('{')
      ? [...badIds.map((id) => path.replace(/\{[^}]+\}/g, id)), ...withKnownProvider, ...waits]
      : [path, `${path}?email=&limit=abc&before=-1`, `${path}?email=a%00b&agent=%00&site=%00&agent_id=ag_%00&before=9223372036854775807`, `${path}?before=1e300&limit=1e300`, ...authorizeQueries];
      const bodies = method === 'get' || method === 'delete' ? [undefined] : badBodies;
      // Every bad body without credentials and with a session; the broken credentials (read before
      // any body) with no body and with one naming every field: every route meets each of them.
      const sends = [
        ...bodies.flatMap((body) => [{}, auth].map((headers) => ({ body, headers }))),
        ...BROKEN_CREDENTIALS.flatMap((headers) => (bodies.includes(EVERY_FIELD) ? [undefined, EVERY_FIELD] : [undefined]).map((body) => ({ body, headers }))),
      ];
      for (const url of urls) {
        for (const { body, headers } of sends) {
          const res = await t.app.inject({
            method: method.toUpperCase() as 'GET',
            url,
            headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            payload: body,
          });
          checked.push(`${method} ${url}`);
          assert.ok(res.statusCode < 500, `${method.toUpperCase()} ${url} ${String(body).slice(0, 40)} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
          if (res.statusCode >= 400 && String(res.headers['content-type']).startsWith('text/html')) {
            // A person's browser at /oidc/authorize (decisions §28) gets an error page, never a redirect.
            assert.ok(url.startsWith('/oidc/authorize'), `${method} ${url}: an HTML error outside the authorize page`);
            assert.match(res.body, /id="cn-error" class="cn-status cn-error">[^<]+</, `${method} ${url}: the error page says what is wrong`);
            assert.equal(res.headers.location, undefined);
          } else if (res.statusCode >= 400) {
            const detail = json<{ detail: unknown }>(res).detail;
            assert.ok(typeof detail === 'string' || Array.isArray(detail), `${method} ${url}: no detail`);
          }
        }
      }
    }
  }
  assert.ok(checked.length > 200);
  for (const route of ['get /api/oauth/google/start', 'get /api/oauth/google/callback?code=%00&state=%00', 'delete /api/oauth/google', 'post /api/txn/x/oauth/google']) {
    assert.ok(checked.includes(route), `${route} was walked with the configured provider`);
  }
  for (const route of ['get /oidc/authorize?client_id=https%3A%2F%2F10.0.0.1%2Fclient.json&redirect_uri=https%3A%2F%2Fx.example%2Fcb', 'post /api/oidc/consent/start', 'post /api/oidc/consent/approve', 'post /api/oidc/consent/deny']) {
    assert.ok(checked.includes(route), `${route} was walked`);
  }
  for (const route of ['post /api/v1/stepup/site', 'get /api/v1/stepup/site/x', 'get /api/v1/stepup/site/t_aaaaaaaaaaaaaaaaaaaaaaaaaa?wait=26', 'get /api/v1/receipts/x']) {
    assert.ok(checked.includes(route), `${route} was walked`);
  }
}

