import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, json, signUp, type TestApp, testApp } from './helpers/app.ts';
import { type Owner, ownerWithPasskey } from './helpers/approvals.ts';
import { type ActiveOperator, activeOperator, basic, pkce } from './helpers/operators.ts';
import { CONSENT_STARTS_PER_MINUTE } from '../src/domain/operators/consent.ts';

interface Started { consent_id: string; options: { challenge: string; allowCredentials?: { id: string }[] } }

const query = (q: Record<string, string | undefined>): string =>
  new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined)).toString();

/**
 * Consent to an operator and the code exchange (decisions §17) over HTTP, on SQLite and PostgreSQL:
 * the /connect page and its refusals (never a redirect), the passkey that confirms (a password
 * session alone cannot), the redirect with code, state and iss or error=access_denied, and the
 * single-use, 60-second, PKCE-bound code whose reuse ends the connection.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`operators: consent and the code exchange (${backend})`, () => {
    let t: TestApp;
    let op: ActiveOperator;
    before(async () => {
      t = await testApp({ backend });
      op = await activeOperator(t);
    });
    after(() => t.close());

    const link = (o: ActiveOperator, over: Record<string, string | undefined> = {}) => {
      const { verifier, challenge } = pkce();
      return { verifier, fields: { operator: o.id, redirect_uri: o.redirectUri, state: 'st-123', code_challenge: challenge, code_challenge_method: 'S256', ...over } };
    };
    const post = (url: string, headers: Record<string, string>, payload: unknown) => t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
    const start = (owner: { auth: Record<string, string> }, fields: unknown) => post('/api/connect/start', owner.auth, fields);
    async function started(owner: Owner, fields: Record<string, unknown>): Promise<Started> {
      const res = await start(owner, fields);
      expectStatus(res, 200);
      return json<Started>(res);
    }
    const finish = (owner: Owner, s: Started, assertion: unknown = owner.authenticator.assert(s.options)) => post('/api/connect/finish', owner.auth, { consent_id: s.consent_id, assertion });
    /** Consent with the passkey: answers the redirect address. */
    async function consent(owner: Owner, o: ActiveOperator = op, over: Record<string, string | undefined> = {}): Promise<{ redirect: URL; verifier: string }> {
      const { verifier, fields } = link(o, over);
      const res = await finish(owner, await started(owner, fields));
      expectStatus(res, 200);
      return { redirect: new URL(json<{ redirect: string }>(res).redirect), verifier };
    }
    const exchange = (o: ActiveOperator, body: unknown) => post('/api/v1/operator/token', o.auth, body);
    const activity = async (owner: { auth: Record<string, string> }) => JSON.stringify(json(await t.app.inject({ url: '/api/activity', headers: owner.auth })));

    it('the page shows who asks, the browser kind and the agent limit (escaped), with Approve and Deny; never cached', async () => {
      const shown = await activeOperator(t, { name: 'Acme <b>agents</b> & co', browser: 'user' });
      const res = await t.app.inject({ url: `/connect?${query(link(shown).fields)}` });
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.location, undefined);
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
      assert.ok(res.body.includes('Connect Acme &lt;b&gt;agents&lt;/b&gt; &amp; co?'), 'the name, escaped');
      assert.ok(!res.body.includes('<b>agents</b>'));
      assert.ok(res.body.includes('acme.example'), 'the domain');
      assert.match(res.body, /id="cn-limit">5</);
      assert.match(res.body, /on your own computer/);
      assert.match(res.body, /id="cn-approve"/);
      assert.match(res.body, /id="cn-deny"/);
      assert.match(res.body, /src="\/assets\/app\/connect\.js\?v=[\w-]{12}"/);
      expectStatus(await t.app.inject({ url: '/assets/app/connect.js' }), 200);
      expectStatus(await t.app.inject({ url: '/assets/app/connect.css' }), 200);
    });

    it('a bad operator, an unregistered redirect URI, missing or plain PKCE: an error page (4xx), never a redirect', async () => {
      const pending = await activeOperator(t, { status: 'pending' });
      const disabled = await activeOperator(t, { status: 'disabled' });
      const base = link(op).fields;
      const cases: [Record<string, string | undefined>, number, RegExp][] = [
        [{ operator: 'op_unknown' }, 404, /unknown operator/],
        [{ operator: 'nonsense' }, 404, /unknown operator/],
        [{ operator: undefined }, 400, /operator is missing/],
        [{ operator: pending.id, redirect_uri: pending.redirectUri }, 403, /not switched on/],
        [{ operator: disabled.id, redirect_uri: disabled.redirectUri }, 403, /switched off/],
        [{ redirect_uri: 'https://evil.example/cb' }, 400, /not one the operator registered/],
        [{ redirect_uri: 'https://acme.example/cb/more' }, 400, /not one the operator registered/],
        [{ redirect_uri: 'https://acme.example/cb?x=1' }, 400, /not one the operator registered/],
        [{ redirect_uri: 'https://ACME.example/cb' }, 400, /not one the operator registered/],
        [{ redirect_uri: undefined }, 400, /redirect_uri is missing/],
        [{ code_challenge_method: undefined }, 400, /PKCE is required/],
        [{ code_challenge_method: 'plain' }, 400, /S256/],
        [{ code_challenge: undefined }, 400, /code_challenge must be/],
        [{ code_challenge: 'short' }, 400, /code_challenge must be/],
        [{ state: 'x'.repeat(501) }, 400, /state must be/],
      ];
      for (const [over, status, message] of cases) {
        const res = await t.app.inject({ url: `/connect?${query({ ...base, ...over })}` });
        assert.equal(res.statusCode, status, `${JSON.stringify(over)}: ${res.statusCode}`);
        assert.equal(res.headers.location, undefined);
        assert.match(String(res.headers['content-type']), /^text\/html/);
        assert.match(res.body, message, JSON.stringify(over));
        assert.ok(!res.body.includes('connect.js'), 'the error page has no consent script');
      }
      // Repeated fields, a state with a control character, no query at all.
      for (const q of [`${query(base)}&operator=${op.id}`, `${query(base)}&redirect_uri=${encodeURIComponent(op.redirectUri)}`, query({ ...base, state: 'a\nb' }), '']) {
        const res = await t.app.inject({ url: `/connect?${q}` });
        assert.equal(res.statusCode, 400, `${q}: ${res.statusCode}`);
        assert.equal(res.headers.location, undefined);
      }
    });

    it('start: needs a sign-in (operator credentials are none) and a passkey (a password session alone is refused, saying what to do)', async () => {
      const { fields } = link(op);
      expectStatus(await post('/api/connect/start', {}, fields), 401);
      expectStatus(await post('/api/connect/start', op.auth, fields), 401);
      const passwordOnly = await signUp(t.app);
      const refused = await start(passwordOnly, fields);
      expectStatus(refused, 403);
      assert.match(json<{ detail: string }>(refused).detail, /needs a passkey.*password sign-in alone is not enough.*add a passkey/);
      const owner = await ownerWithPasskey(t);
      const s = await started(owner, fields);
      assert.ok(s.consent_id.length > 40);
      assert.equal(s.options.allowCredentials?.length, 1, 'the owner\'s own passkey is asked for');
      // With the session cookie, the Origin rule of decisions §2: another origin is refused.
      const cookie = { cookie: `session=${owner.session_token}` };
      expectStatus(await post('/api/connect/start', { ...cookie, origin: 'https://evil.example' }, fields), 403);
      expectStatus(await post('/api/connect/start', { ...cookie, origin: t.config.baseUrl }, fields), 200);
      // Operator credentials open none of the consent calls.
      for (const url of ['/api/connect/finish', '/api/connect/deny']) {
        expectStatus(await post(url, op.auth, { consent_id: s.consent_id, assertion: owner.authenticator.assert(s.options) }), url.endsWith('deny') ? 422 : 401);
        expectStatus(await post(url, op.auth, url.endsWith('deny') ? { consent_id: s.consent_id } : { consent_id: s.consent_id, assertion: {} }), 401);
      }
    });

    it('start refuses the same bad links as the page, and bad bodies of every shape with a 4xx', async () => {
      const owner = await ownerWithPasskey(t);
      const base = link(op).fields;
      for (const [over, status] of [[{ operator: 'op_unknown' }, 404], [{ redirect_uri: 'https://evil.example/cb' }, 400], [{ code_challenge_method: 'plain' }, 400], [{ code_challenge_method: undefined }, 400], [{ code_challenge: undefined }, 400]] as const) {
        const res = await start(owner, JSON.parse(JSON.stringify({ ...base, ...over })));
        assert.equal(res.statusCode, status, `${JSON.stringify(over)}: ${res.body}`);
      }
      for (const body of [undefined, null, 'x', 42, [], {}, { ...base, extra: 1 }, { ...base, operator: 7 }, { ...base, redirect_uri: ['a'] }, { ...base, state: 'x'.repeat(501) }, { ...base, code_challenge: 'a'.repeat(129) }]) {
        const res = await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: { ...owner.auth, 'content-type': 'application/json' }, payload: body === undefined ? '' : JSON.stringify(body) });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(body)}: ${res.statusCode} ${res.body}`);
      }
      for (const body of [{}, { consent_id: '' }, { consent_id: 5, assertion: {} }, { consent_id: 'x'.repeat(4001), assertion: {} }, { consent_id: 'junk', assertion: {} }, { consent_id: 'junk', assertion: 'x' }]) {
        for (const url of ['/api/connect/finish', '/api/connect/deny']) {
          const res = await post(url, owner.auth, body);
          assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url} ${JSON.stringify(body)}: ${res.statusCode} ${res.body}`);
        }
      }
    });

    it('approve with the passkey: the registered URI gets code, state and iss; the code is stored only as a hash', async () => {
      const owner = await ownerWithPasskey(t);
      const { redirect } = await consent(owner, op);
      assert.equal(`${redirect.origin}${redirect.pathname}`, op.redirectUri);
      assert.deepEqual([...redirect.searchParams.keys()].sort(), ['code', 'iss', 'state']);
      assert.equal(redirect.searchParams.get('state'), 'st-123');
      assert.equal(redirect.searchParams.get('iss'), t.config.baseUrl);
      const code = redirect.searchParams.get('code') as string;
      assert.match(code, /^[A-Za-z0-9_-]{43}$/);
      const stored = await t.services.store.connections.codeByHash(createHash('sha256').update(code).digest('hex'));
      assert.equal(stored?.userId, owner.user.id);
      assert.equal(stored?.expiresAt, t.clock.now() + 60_000);
      assert.ok(!JSON.stringify(stored).includes(code));
      assert.match(await activity(owner), /operator\.consented/);
      // Without state, none is sent back.
      const bare = await consent(owner, op, { state: undefined });
      assert.deepEqual([...bare.redirect.searchParams.keys()].sort(), ['code', 'iss']);
    });

    it('finish refuses another person\'s, a tampered or an expired consent, a replayed assertion, and an operator switched off meanwhile', async () => {
      const owner = await ownerWithPasskey(t);
      const other = await ownerWithPasskey(t);
      const s = await started(owner, link(op).fields);
      expectStatus(await post('/api/connect/finish', other.auth, { consent_id: s.consent_id, assertion: owner.authenticator.assert(s.options) }), 400);
      const flipped = `${s.consent_id.slice(0, 20)}${s.consent_id[20] === 'A' ? 'B' : 'A'}${s.consent_id.slice(21)}`;
      expectStatus(await post('/api/connect/finish', owner.auth, { consent_id: flipped, assertion: owner.authenticator.assert(s.options) }), 400);
      // An assertion made for another consent's options does not confirm this one.
      // (That attempt spent s2's challenge too: a challenge answers one attempt, good or bad.)
      const s2 = await started(owner, link(op).fields);
      expectStatus(await finish(owner, s, owner.authenticator.assert(s2.options)), 401);
      expectStatus(await finish(owner, s2), 401);
      const s4 = await started(owner, link(op).fields);
      const assertion = owner.authenticator.assert(s4.options);
      expectStatus(await finish(owner, s4, assertion), 200);
      expectStatus(await finish(owner, s4, assertion), 401);
      const late = await started(owner, link(op).fields);
      t.clock.advance(10 * 60_000 + 1);
      const lateRes = await finish(owner, late);
      expectStatus(lateRes, 400);
      assert.match(json<{ detail: string }>(lateRes).detail, /expired/);
      const switching = await activeOperator(t);
      const s3 = await started(owner, link(switching).fields);
      await t.services.store.operators.switchStatus(switching.id, ['active'], 'disabled', t.clock.now());
      const off = await finish(owner, s3);
      expectStatus(off, 403);
      assert.equal(off.headers.location, undefined);
    });

    it('deny: the registered URI gets error=access_denied, state and iss; no code; recorded', async () => {
      const owner = await ownerWithPasskey(t);
      const s = await started(owner, link(op).fields);
      const res = await post('/api/connect/deny', owner.auth, { consent_id: s.consent_id });
      expectStatus(res, 200);
      const redirect = new URL(json<{ redirect: string }>(res).redirect);
      assert.equal(`${redirect.origin}${redirect.pathname}`, op.redirectUri);
      assert.deepEqual(Object.fromEntries(redirect.searchParams), { error: 'access_denied', state: 'st-123', iss: t.config.baseUrl });
      assert.match(await activity(owner), /operator\.consent_denied/);
      const other = await ownerWithPasskey(t);
      expectStatus(await post('/api/connect/deny', other.auth, { consent_id: s.consent_id }), 400);
    });

    it(`start: at most ${CONSENT_STARTS_PER_MINUTE} per person per minute (each stores a passkey challenge), then 429 with Retry-After; another person is not held back`, async () => {
      const owner = await ownerWithPasskey(t);
      for (let i = 0; i < CONSENT_STARTS_PER_MINUTE; i++) expectStatus(await start(owner, link(op).fields), 200);
      const refused = await start(owner, link(op).fields);
      expectStatus(refused, 429);
      assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After says when to come back');
      expectStatus(await start(await ownerWithPasskey(t), link(op).fields), 200);
    });

    it('the exchange answers the connection once: pairwise sub, 5 agents; consenting again gives the same live connection', async () => {
      const owner = await ownerWithPasskey(t);
      const { redirect, verifier } = await consent(owner);
      const body = { code: redirect.searchParams.get('code'), code_verifier: verifier, redirect_uri: op.redirectUri };
      const res = await exchange(op, body);
      expectStatus(res, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      const conn = json<{ connection_id: string; sub: string; max_agents: number }>(res);
      assert.match(conn.connection_id, /^cn_[a-z2-7]{26}$/);
      assert.equal(conn.max_agents, 5);
      assert.match(conn.sub, /^[A-Za-z0-9_-]{43}$/);
      assert.ok(!conn.sub.includes(owner.user.id));
      assert.deepEqual(Object.keys(conn).sort(), ['connection_id', 'max_agents', 'sub']);
      assert.match(await activity(owner), /operator\.connected/);
      // Again while connected: the same connection.
      const again = await consent(owner);
      const second = json<typeof conn>(await exchange(op, { code: again.redirect.searchParams.get('code'), code_verifier: again.verifier, redirect_uri: op.redirectUri }));
      assert.deepEqual(second, conn);
      // Another operator knows the same person by another sub; another person has another sub here.
      const other = await activeOperator(t);
      const o2 = await consent(owner, other);
      const atOther = json<typeof conn>(await exchange(other, { code: o2.redirect.searchParams.get('code'), code_verifier: o2.verifier, redirect_uri: other.redirectUri }));
      assert.notEqual(atOther.sub, conn.sub);
      assert.notEqual(atOther.connection_id, conn.connection_id);
      const someoneElse = await ownerWithPasskey(t);
      const o3 = await consent(someoneElse);
      const theirs = json<typeof conn>(await exchange(op, { code: o3.redirect.searchParams.get('code'), code_verifier: o3.verifier, redirect_uri: op.redirectUri }));
      assert.notEqual(theirs.sub, conn.sub);
    });

    it('a code is bound to its operator, redirect URI and PKCE verifier; any mismatch spends it; it lasts 60 s', async () => {
      const owner = await ownerWithPasskey(t);
      const other = await activeOperator(t);
      type Attempt = (c: { code: string; verifier: string }) => Promise<LightMyRequestResponse>;
      const cases: [Attempt, string][] = [
        [(c) => exchange(op, { code: c.code, code_verifier: pkce().verifier, redirect_uri: op.redirectUri }), 'verifier'],
        [(c) => exchange(op, { code: c.code, code_verifier: c.verifier, redirect_uri: 'https://acme.example/cb2' }), 'redirect_uri'],
        [(c) => exchange(other, { code: c.code, code_verifier: c.verifier, redirect_uri: op.redirectUri }), 'operator'],
      ];
      for (const [attempt, what] of cases) {
        const { redirect, verifier } = await consent(owner);
        const code = redirect.searchParams.get('code') as string;
        const res = await attempt({ code, verifier });
        assert.equal(res.statusCode, 400, `${what}: ${res.body}`);
        assert.equal(json<{ error: string }>(res).error, 'invalid_grant');
        expectStatus(await exchange(op, { code, code_verifier: verifier, redirect_uri: op.redirectUri }), 400);
      }
      const { redirect, verifier } = await consent(owner);
      t.clock.advance(60_001);
      const late = await exchange(op, { code: redirect.searchParams.get('code'), code_verifier: verifier, redirect_uri: op.redirectUri });
      expectStatus(late, 400);
      assert.match(json<{ detail: string }>(late).detail, /60 seconds/);
      const fresh = await consent(owner);
      t.clock.advance(59_000);
      expectStatus(await exchange(op, { code: fresh.redirect.searchParams.get('code'), code_verifier: fresh.verifier, redirect_uri: op.redirectUri }), 200);
    });

    it('reusing a spent code ends the connection it gave; consenting again makes a new one with the same sub', async () => {
      const owner = await ownerWithPasskey(t);
      const o = await activeOperator(t);
      const { redirect, verifier } = await consent(owner, o);
      const body = { code: redirect.searchParams.get('code'), code_verifier: verifier, redirect_uri: o.redirectUri };
      const conn = json<{ connection_id: string; sub: string }>(await exchange(o, body));
      const reused = await exchange(o, body);
      expectStatus(reused, 400);
      assert.equal(json<{ error: string }>(reused).error, 'invalid_grant');
      const ended = await t.services.store.connections.byId(conn.connection_id);
      assert.equal(ended?.status, 'removed');
      assert.equal(ended?.endedAt, t.clock.now());
      assert.match(await activity(owner), /operator\.connection_ended.*code_reused|code_reused.*operator\.connection_ended/);
      const again = await consent(owner, o);
      const next = json<{ connection_id: string; sub: string }>(await exchange(o, { code: again.redirect.searchParams.get('code'), code_verifier: again.verifier, redirect_uri: o.redirectUri }));
      assert.notEqual(next.connection_id, conn.connection_id);
      assert.equal(next.sub, conn.sub);
      // A spent code presented by another operator ends nothing.
      const stranger = await activeOperator(t);
      expectStatus(await exchange(stranger, { code: again.redirect.searchParams.get('code'), code_verifier: again.verifier, redirect_uri: o.redirectUri }), 400);
      assert.equal((await t.services.store.connections.byId(next.connection_id))?.status, 'active');
    });

    it('racing exchanges of one code: exactly one wins, and the others are reuses', async () => {
      const owner = await ownerWithPasskey(t);
      const { redirect, verifier } = await consent(owner);
      const body = { code: redirect.searchParams.get('code'), code_verifier: verifier, redirect_uri: op.redirectUri };
      const results = await Promise.all(Array.from({ length: 8 }, () => exchange(op, body)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 400, 400, 400, 400, 400, 400, 400]);
      // The losers presented a code already exchanged: a reuse, which ends the connection the winner got.
      const won = json<{ connection_id: string }>(results.find((r) => r.statusCode === 200) as LightMyRequestResponse);
      assert.equal((await t.services.store.connections.byId(won.connection_id))?.status, 'removed');
    });

    it('the exchange: HTTP Basic (401 with a challenge, 403 for an operator not on), bad bodies 4xx never 5xx', async () => {
      const owner = await ownerWithPasskey(t);
      const { redirect, verifier } = await consent(owner);
      const body = { code: redirect.searchParams.get('code'), code_verifier: verifier, redirect_uri: op.redirectUri };
      const anonymous = await post('/api/v1/operator/token', {}, body);
      expectStatus(anonymous, 401);
      assert.match(String(anonymous.headers['www-authenticate']), /^Basic realm="operator"/);
      expectStatus(await post('/api/v1/operator/token', basic(op.id, 'wrong'), body), 401);
      expectStatus(await post('/api/v1/operator/token', owner.auth, body), 401);
      const pending = await activeOperator(t, { status: 'pending' });
      expectStatus(await exchange(pending, body), 403);
      for (const bad of [undefined, null, 'x', [], {}, { ...body, extra: 1 }, { ...body, code: 5 }, { ...body, code: '' }, { ...body, code: 'a b' }, { ...body, code: 'x'.repeat(501) },
        { ...body, code_verifier: 'short' }, { ...body, code_verifier: 'é'.repeat(50) }, { ...body, code_verifier: 'a'.repeat(201) }, { ...body, redirect_uri: null }, { code: body.code }]) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: { ...op.auth, 'content-type': 'application/json' }, payload: bad === undefined ? '' : JSON.stringify(bad) });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(bad)}: ${res.statusCode} ${res.body}`);
      }
      // None of that spent the code (malformed input is refused before it is looked up).
      expectStatus(await exchange(op, body), 200);
    });
  });
}

describe('operators: consent logs', () => {
  it('never carry a code, its hash, a code_verifier, a consent id or the operator secret, at any log level', async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const t = await testApp({ env: { LOG_LEVEL: 'trace' }, logStream });
    const secrets: string[] = [];
    try {
      const op = await activeOperator(t);
      const owner = await ownerWithPasskey(t);
      const { verifier, challenge } = pkce();
      const fields = { operator: op.id, redirect_uri: op.redirectUri, state: 'log-state', code_challenge: challenge, code_challenge_method: 'S256' };
      expectStatus(await t.app.inject({ url: `/connect?${query(fields)}` }), 200);
      const started = json<Started>(await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: owner.auth, payload: fields }));
      const finished = await t.app.inject({ method: 'POST', url: '/api/connect/finish', headers: owner.auth, payload: { consent_id: started.consent_id, assertion: owner.authenticator.assert(started.options) } });
      expectStatus(finished, 200);
      const code = new URL(json<{ redirect: string }>(finished).redirect).searchParams.get('code') as string;
      secrets.push(code, createHash('sha256').update(code).digest('hex'), verifier, started.consent_id, op.secret);
      const body = { code, code_verifier: verifier, redirect_uri: op.redirectUri };
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: op.auth, payload: body }), 200);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: op.auth, payload: body }), 400);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: op.auth, payload: { ...body, code_verifier: 'short' } }), 400);
    } finally {
      await t.close();
    }
    const log = lines.join('');
    assert.ok(lines.length > 10, 'the requests were logged');
    for (const secret of secrets) assert.equal(log.includes(secret), false, `a secret reached the log: ${secret.slice(0, 8)}...`);
  });
});
