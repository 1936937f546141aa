import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { startOperatorSite, type OperatorSite } from './helpers/stand-ins/operator-site.ts';
import { requireOperator } from '../src/http/auth/operator.ts';
import { AppError } from '../src/domain/errors.ts';
import { OPERATOR_LIMITS } from '../src/domain/operators/operators.ts';
import { MAX_OPERATORS_PER_PERSON } from '../src/domain/operators/registration.ts';
import { hashClientSecret } from '../src/crypto/client-secret.ts';

type Owner = Awaited<ReturnType<typeof signUp>>;
interface OperatorJson {
  id: string; name: string; domain: string; redirect_uris: string[]; browser: string; status: string; verified: boolean; verified_at: string | null;
  verification: { url: string; line: string }; secret?: string;
}

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

/** Operator registration, listing, secrets and domain verification over HTTP (decisions §17, §24, §25), on SQLite and PostgreSQL. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`operators: registration, secrets, verification (${backend})`, () => {
    let t: TestApp;
    let site: OperatorSite;
    before(async () => {
      site = await startOperatorSite();
      t = await testApp({ backend, env: { OUTBOUND_ALLOW_LOOPBACK: 'true' } });
    });
    after(async () => {
      await t.close();
      await site.close();
    });

    const register = (owner: Owner, payload: unknown) => t.app.inject({ method: 'POST', url: '/api/operators', headers: owner.auth, payload: payload as Record<string, unknown> });
    const good = () => ({ name: 'Acme agents', redirect_uris: [`${site.origin}/cb`, `${site.origin}/cb2`], browser: 'operator' });
    async function registered(owner: Owner): Promise<OperatorJson> {
      const res = await register(owner, good());
      expectStatus(res, 200);
      return json<OperatorJson>(res);
    }

    it('registers: pending, the secret once (stored as a hash), the verification line; listed for its owner only', async () => {
      const owner = await signUp(t.app);
      const op = await registered(owner);
      assert.match(op.id, /^op_[a-z2-7]{26}$/);
      assert.equal(op.status, 'pending');
      assert.equal(op.verified, false);
      assert.equal(op.domain, new URL(site.origin).host);
      assert.equal(op.verification.url, `${site.origin}/.well-known/service-site.txt`);
      assert.match(op.verification.line, new RegExp(`^mandate-operator=${op.id}:[A-Za-z0-9_-]{24}$`));
      assert.ok(op.secret && op.secret.length >= 40);
      const row = await t.services.store.operators.byId(op.id);
      assert.equal(row?.secretHash, hashClientSecret(op.secret));
      assert.ok(!JSON.stringify(row).includes(op.secret), 'the secret itself is not stored');

      const listed = json<OperatorJson[]>(await t.app.inject({ url: '/api/operators', headers: owner.auth }));
      assert.deepEqual(listed.map((o) => o.id), [op.id]);
      assert.equal(listed[0]?.secret, undefined, 'never shown again');
      assert.ok(!JSON.stringify(listed).includes(op.secret));
      assert.deepEqual(json(await t.app.inject({ url: '/api/operators', headers: (await signUp(t.app)).auth })), []);
      assert.ok(JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth }))).includes('operator.registered'));
    });

    it('refuses bad input of every shape with a 4xx naming the problem, never a 5xx', async () => {
      const owner = await signUp(t.app);
      const g = good();
      const cases: [string, unknown, number, RegExp?][] = [
        ['no body', undefined, 422],
        ['null', null, 422],
        ['an array', [g], 422],
        ['a string', 'acme', 422],
        ['missing name', { redirect_uris: g.redirect_uris, browser: 'user' }, 422],
        ['missing browser', { name: 'x', redirect_uris: g.redirect_uris }, 422],
        ['unknown field', { ...g, secret: 'mine' }, 422],
        ['name a number', { ...g, name: 42 }, 422],
        ['name too long', { ...g, name: 'x'.repeat(81) }, 422],
        ['name only spaces', { ...g, name: '   ' }, 400, /name must be 1 to 80/],
        ['name with a bidi override', { ...g, name: 'Acme\u202Egnp.exe' }, 400],
        ['name with a control character', { ...g, name: 'Acme\u0007' }, 400],
        ['browser unknown', { ...g, browser: 'both' }, 422],
        ['no redirect URI', { ...g, redirect_uris: [] }, 422],
        ['eleven redirect URIs', { ...g, redirect_uris: Array.from({ length: 11 }, (_, i) => `${site.origin}/cb${i}`) }, 422],
        ['redirect URI not a string', { ...g, redirect_uris: [42] }, 422],
        ['redirect URI not a URL', { ...g, redirect_uris: ['not a url'] }, 400],
        ['redirect URIs on two hosts', { ...g, redirect_uris: ['https://acme.example/cb', 'https://other.example/cb'] }, 400, /all redirect URIs must be on one host/],
        ['redirect URIs on two schemes', { ...g, redirect_uris: ['https://127.0.0.1/cb', 'http://127.0.0.1/cb'] }, 400, /one host/],
        ['redirect URI with http: to a public host', { ...g, redirect_uris: ['http://acme.example/cb'] }, 400, /https:/],
        ['redirect URI with a fragment', { ...g, redirect_uris: ['https://acme.example/cb#x'] }, 400, /fragment/],
        ['redirect URI with a wildcard', { ...g, redirect_uris: ['https://*.acme.example/cb'] }, 400, /wildcard/],
        ['redirect URI with a user name', { ...g, redirect_uris: ['https://me:pw@acme.example/cb'] }, 400, /user name/],
        ['redirect URI repeated', { ...g, redirect_uris: ['https://acme.example/cb', 'https://acme.example/cb'] }, 400, /repeats/],
      ];
      for (const [label, payload, status, detail] of cases) {
        const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: { ...owner.auth, 'content-type': 'application/json' }, payload: payload === undefined ? '' : JSON.stringify(payload) });
        assert.equal(res.statusCode, status, `${label}: ${res.statusCode} ${res.body}`);
        if (detail) assert.match(JSON.stringify(json(res)), detail, label);
      }
      const notJson = await t.app.inject({ method: 'POST', url: '/api/operators', headers: { ...owner.auth, 'content-type': 'application/json' }, payload: '{"name":' });
      assert.equal(notJson.statusCode, 422, notJson.body);
      const form = await t.app.inject({ method: 'POST', url: '/api/operators', headers: { ...owner.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' });
      assert.ok(form.statusCode >= 400 && form.statusCode < 500, form.body);
      for (const oid of ['op_missing', 'xyz', 'op_' + 'a'.repeat(80), '%00', 'op_../../x']) {
        for (const path of [`/api/operators/${encodeURIComponent(oid)}/secret`, `/api/operators/${encodeURIComponent(oid)}/verify`]) {
          const res = await t.app.inject({ method: 'POST', url: path, headers: owner.auth });
          assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${path}: ${res.statusCode} ${res.body}`);
        }
      }
      assert.equal((await t.app.inject({ url: '/api/operators', headers: owner.auth })).json().length, 0, 'nothing was registered');
    });

    it('rotates the secret: shown once, the old one stops at once; owner only (another owner 404), signed in only (401)', async () => {
      const owner = await signUp(t.app);
      const op = await registered(owner);
      const old = op.secret as string;
      assert.equal((await t.services.operators.authenticate(op.id, old))?.id, op.id);
      const res = await t.app.inject({ method: 'POST', url: `/api/operators/${op.id}/secret`, headers: owner.auth });
      expectStatus(res, 200);
      const { secret } = json<{ secret: string }>(res);
      assert.notEqual(secret, old);
      assert.equal(await t.services.operators.authenticate(op.id, old), undefined, 'the old secret stops at once');
      assert.equal((await t.services.operators.authenticate(op.id, secret))?.id, op.id);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/operators/${op.id}/secret`, headers: (await signUp(t.app)).auth }), 404);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/operators/${op.id}/secret` }), 401);
      assert.equal((await t.services.operators.authenticate(op.id, secret))?.id, op.id, 'refused rotations changed nothing');
      assert.ok(JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth }))).includes('operator.secret_rotated'));
    });

    it('verifies the domain through the outbound guard: every failure names what was found; success records verified_at', async () => {
      const owner = await signUp(t.app);
      const op = await registered(owner);
      const verify = (who: Owner = owner) => t.app.inject({ method: 'POST', url: `/api/operators/${op.id}/verify`, headers: who.auth });
      const failure = async (pattern: RegExp) => {
        const res = await verify();
        expectStatus(res, 400);
        const body = json<{ detail: string; url: string; line: string; found: string[] }>(res);
        assert.match(body.detail, pattern);
        assert.ok(body.detail.includes(`Put this line, on a line of its own, in ${op.verification.url}: ${op.verification.line}`), body.detail);
        assert.equal(body.line, op.verification.line);
        assert.equal(body.url, op.verification.url);
        assert.equal((await t.services.store.operators.byId(op.id))?.verifiedAt, null, 'a failed check verifies nothing');
        return body;
      };
      site.requests.length = 0;
      site.serve({ status: 404 });
      await failure(/answered 404: there is no file there yet/);
      assert.deepEqual(site.requests.map((r) => [r.method, r.path]), [['GET', '/.well-known/service-site.txt']]);
      site.serve({ status: 500, body: 'oops' });
      await failure(/answered 500; it must answer 200/);
      site.serve({ status: 200, body: 'hello\nworld\n' });
      await failure(/fetched \(status 200, 12 bytes\) but holds no mandate-operator= line/);
      site.serve({ status: 200, body: `${op.verification.line}x\n` });
      const wrong = await failure(/has a line for op_[a-z2-7]+ but with another token/);
      assert.deepEqual(wrong.found, [`${op.verification.line}x`]);
      site.serve({ status: 200, body: 'mandate-operator=op_someoneelse:tok\n' });
      await failure(/only for other operators/);
      site.serve({ status: 302, location: 'https://elsewhere.example/file.txt' });
      await failure(/answered 302, a redirect to https:\/\/elsewhere\.example\/file\.txt; redirects are not followed/);
      site.serve({ status: 200, body: Buffer.alloc(70_000, 0x61) });
      await failure(/could not fetch .*(64|65536|large)/i);
      expectStatus(await verify(await signUp(t.app)), 404);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/operators/${op.id}/verify` }), 401);

      site.serve({ status: 200, body: `# our lines\r\n  ${op.verification.line}  \r\nmandate-client=c_x:y\r\n` });
      const res = await verify();
      expectStatus(res, 200);
      const ok = json<{ id: string; verified: boolean; verified_at: string }>(res);
      assert.equal(ok.verified, true);
      assert.equal(ok.verified_at, new Date(t.clock.now()).toISOString());
      const listed = json<OperatorJson[]>(await t.app.inject({ url: '/api/operators', headers: owner.auth }));
      assert.equal(listed[0]?.verified, true);
      assert.equal(listed[0]?.status, 'pending', 'verified is not on: an admin switches it on');
      site.serve({ status: 404 });
      expectStatus(await verify(), 400);
      assert.notEqual((await t.services.store.operators.byId(op.id))?.verifiedAt, null, 'a later failed check keeps the verification');
      assert.ok(JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth }))).includes('operator.verified'));
    });

    it(`limits registrations (${OPERATOR_LIMITS.registrationsPerHour} an hour, then 429) and operators per person (${MAX_OPERATORS_PER_PERSON}, then 409), and verifications (${OPERATOR_LIMITS.verificationsPerHour} an hour)`, async () => {
      const owner = await signUp(t.app);
      for (let i = 0; i < OPERATOR_LIMITS.registrationsPerHour; i++) expectStatus(await register(owner, good()), 200);
      const limited = await register(owner, good());
      expectStatus(limited, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      t.clock.advance(3600_000);
      for (let i = OPERATOR_LIMITS.registrationsPerHour; i < MAX_OPERATORS_PER_PERSON; i++) expectStatus(await register(owner, good()), 200);
      t.clock.advance(3600_000);
      const capped = await register(owner, good());
      expectStatus(capped, 409);
      assert.match(json<{ detail: string }>(capped).detail, new RegExp(`${MAX_OPERATORS_PER_PERSON} operators`));

      const [op] = json<OperatorJson[]>(await t.app.inject({ url: '/api/operators', headers: owner.auth }));
      site.serve({ status: 404 });
      for (let i = 0; i < OPERATOR_LIMITS.verificationsPerHour; i++) expectStatus(await t.app.inject({ method: 'POST', url: `/api/operators/${op?.id}/verify`, headers: owner.auth }), 400);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/operators/${op?.id}/verify`, headers: owner.auth }), 429);
      t.clock.advance(3600_000);
    });

    it('operator credentials (HTTP Basic op_id:secret) open no owner endpoint', async () => {
      const owner = await signUp(t.app);
      const op = await registered(owner);
      const auth = basic(op.id, op.secret as string);
      const endpoints: [string, string, unknown?][] = [
        ['GET', '/api/me'],
        ['GET', '/api/operators'],
        ['POST', '/api/operators', good()],
        ['POST', `/api/operators/${op.id}/secret`],
        ['POST', `/api/operators/${op.id}/verify`],
        ['GET', '/api/agents'],
        ['POST', '/api/agents', { name: 'x' }],
        ['GET', '/api/activity'],
        ['GET', '/api/export'],
        ['GET', '/api/notifications'],
        ['GET', '/api/oidc/clients'],
        ['POST', '/api/account/delete', { confirm: owner.email, password: owner.password }],
        ['GET', '/api/admin/operators'],
        ['POST', `/api/admin/operators/${op.id}/status`, { enabled: true }],
        ['POST', '/api/admin/keys/rotate'],
      ];
      for (const [method, url, payload] of endpoints) {
        const res = await t.app.inject({ method: method as 'GET' | 'POST', url, headers: auth, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
        assert.equal(res.statusCode, 401, `${method} ${url}: ${res.statusCode} ${res.body}`);
      }
      assert.equal((await t.services.store.operators.listForUser(owner.user.id)).length, 1, 'nothing was registered or changed');
    });

    it('operator credentials open no route of the OpenAPI description but the operator API: each other route answers as to nobody, never 2xx where a sign-in is needed', async () => {
      const owner = await signUp(t.app);
      const op = await registered(owner);
      // Switched on: these credentials work on the operator API, and must work nowhere else.
      await t.services.store.operators.markVerified(op.id, t.clock.now());
      await t.services.store.operators.switchStatus(op.id, ['pending'], 'active', t.clock.now());
      const auth = basic(op.id, op.secret as string);
      const spec = json<{ paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> }>(await t.app.inject({ url: '/openapi.json' }));
      let refused = 0;
      let checked = 0;
      let operatorRoutes = 0;
      for (const [path, methods] of Object.entries(spec.paths)) {
        for (const [method, op2] of Object.entries(methods)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
          const url = path.replace(/\{[^}]+\}/g, op.id);
          const send = (headers: Record<string, string>) => t.app.inject({ method: method.toUpperCase() as 'GET', url, headers: { ...headers, 'content-type': 'application/json' }, ...(method === 'get' || method === 'delete' ? {} : { payload: '{}' }) });
          const withBasic = await send(auth);
          assert.ok(withBasic.statusCode < 500, `${method.toUpperCase()} ${path}: ${withBasic.body}`);
          // The operator API itself, where these credentials are the sign-in.
          if (path.startsWith('/api/v1/operator/')) {
            operatorRoutes += 1;
            continue;
          }
          const takesSignIn = op2.responses !== undefined && '401' in op2.responses;
          const anonymous = await send({});
          // The same answer as nobody gets, or a refusal: /challenge, a site that reads any Authorization
          // as a pass, answers a Basic header 401 where nobody gets its page.
          if (withBasic.statusCode !== anonymous.statusCode) assert.ok(withBasic.statusCode === 401, `${method.toUpperCase()} ${path}: Basic ${withBasic.statusCode}, nobody ${anonymous.statusCode}`);
          if (!takesSignIn) continue;
          checked += 1;
          // A route that refuses nobody (public data such as the user-info registry) answers both alike.
          if (anonymous.statusCode >= 300) assert.ok(withBasic.statusCode >= 400, `${method.toUpperCase()} ${path}: ${withBasic.statusCode} with operator credentials`);
          if (withBasic.statusCode === 401) refused += 1;
        }
      }
      assert.equal(operatorRoutes, 6, 'the operator API: token, agents (3), connections (2)');
      assert.ok(checked > 50 && refused > 30, `${refused} of ${checked} routes refused with 401 (the rest stopped earlier, at validation, or are public)`);
    });

    it('the operator authenticator: HTTP Basic op_id:secret, fails closed (401 alike for every bad credential), 403 until switched on', async () => {
      const owner = await signUp(t.app);
      const op = await registered(owner);
      const secret = op.secret as string;
      const attempt = async (authorization: string | undefined) => {
        try {
          const found = await requireOperator(t.services.operators, { headers: { authorization } } as unknown as FastifyRequest);
          return found.id;
        } catch (e) {
          assert.ok(e instanceof AppError);
          if (e.status === 401) assert.match(e.headers['www-authenticate'] ?? '', /^Basic realm="operator"/);
          return e.status;
        }
      };
      const bad = [
        undefined, '', 'Basic', 'Basic !!!', `Bearer ${secret}`, basic(op.id, `${secret}x`).authorization, basic(op.id, '').authorization,
        basic('op_unknown', secret).authorization, basic('', secret).authorization, `Basic ${Buffer.from(`${op.id}${secret}`).toString('base64')}`,
        basic(op.id.toUpperCase(), secret).authorization, `Basic ${'A'.repeat(5000)}`,
      ];
      for (const header of bad) assert.equal(await attempt(header), 401, String(header).slice(0, 40));
      assert.equal(await attempt(basic(op.id, secret).authorization), 403, 'pending: not switched on');
      await t.services.store.operators.markVerified(op.id, t.clock.now());
      await t.services.store.operators.switchStatus(op.id, ['pending'], 'active', t.clock.now());
      assert.equal(await attempt(basic(op.id, secret).authorization), op.id);
      assert.equal(await attempt(`basic ${Buffer.from(`${op.id}:${secret}`).toString('base64')}`), op.id, 'the scheme is case-insensitive');
      await t.services.store.operators.switchStatus(op.id, ['active'], 'disabled', t.clock.now());
      assert.equal(await attempt(basic(op.id, secret).authorization), 403, 'disabled');
    });
  });
}

describe('operators: http: redirect URIs on loopback need OUTBOUND_ALLOW_LOOPBACK (off, as in production)', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('refuses http://127.0.0.1 and http://localhost, and https: to an address the outbound guard refuses; takes https: to a public name', async () => {
    const owner = await signUp(t.app);
    for (const uri of ['http://127.0.0.1:4000/cb', 'http://localhost/cb', 'http://[::1]:9/cb']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: owner.auth, payload: { name: 'Dev', redirect_uris: [uri], browser: 'user' } });
      expectStatus(res, 400);
      assert.match(json<{ detail: string }>(res).detail, /OUTBOUND_ALLOW_LOOPBACK/);
    }
    for (const uri of ['https://127.0.0.1/cb', 'https://10.1.2.3/cb', 'https://localhost:8443/cb', 'https://[::1]/cb', 'https://169.254.169.254/cb']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: owner.auth, payload: { name: 'Private', redirect_uris: [uri], browser: 'user' } });
      expectStatus(res, 400);
      assert.match(json<{ detail: string }>(res).detail, /the service must be able to fetch/, uri);
    }
    const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: owner.auth, payload: { name: 'Acme', redirect_uris: ['https://acme.example:8443/cb'], browser: 'user' } });
    expectStatus(res, 200);
    const op = json<OperatorJson>(res);
    assert.equal(op.domain, 'acme.example:8443');
    assert.equal(op.verification.url, 'https://acme.example:8443/.well-known/service-site.txt');
    assert.equal(op.browser, 'user');
  });
});

describe('operators: logs', () => {
  it('never carry an operator secret, at registration, rotation or when sent as Basic credentials', async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const dir = mkdtempSync(join(tmpdir(), 'mandate-operator-logs-'));
    const store = await openSqliteStore(dir);
    const { app } = await buildApp({ config: parseConfig({ DATA_DIR: dir, LOG_LEVEL: 'trace', OUTBOUND_ALLOW_LOOPBACK: 'true' }), store, logStream });
    const site = await startOperatorSite();
    const secrets: string[] = [];
    try {
      const signedUp = await app.inject({ method: 'POST', url: '/api/users', payload: { email: 'ops-log@example.com', password: 'pw-operator-logs' } });
      const auth = { authorization: `Bearer ${(signedUp.json() as { session_token: string }).session_token}` };
      const created = await app.inject({ method: 'POST', url: '/api/operators', headers: auth, payload: { name: 'Logged', redirect_uris: [`${site.origin}/cb`], browser: 'operator' } });
      assert.equal(created.statusCode, 200, created.body);
      const op = created.json() as { id: string; secret: string; verification: { line: string } };
      secrets.push(op.secret);
      const rotated = await app.inject({ method: 'POST', url: `/api/operators/${op.id}/secret`, headers: auth });
      const secret = (rotated.json() as { secret: string }).secret;
      secrets.push(secret);
      for (const s of [op.secret, secret]) {
        await app.inject({ url: '/api/operators', headers: basic(op.id, s) });
        await app.inject({ method: 'POST', url: `/api/admin/operators/${op.id}/status`, headers: basic(op.id, s), payload: { enabled: true } });
      }
      site.serve({ status: 200, body: `${op.verification.line}\n` });
      assert.equal((await app.inject({ method: 'POST', url: `/api/operators/${op.id}/verify`, headers: auth })).statusCode, 200);
    } finally {
      await app.close();
      await store.close();
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const log = lines.join('');
    assert.ok(lines.length > 5, 'the requests were logged');
    for (const s of secrets) {
      assert.equal(log.includes(s), false, `a secret reached the log: ${s.slice(0, 8)}...`);
      assert.equal(log.includes(hashClientSecret(s)), false, 'nor its hash');
    }
  });
});
