import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, json, signUp, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { freePort } from './helpers/server-process.ts';
import { startOperatorSite, type OperatorSite } from './helpers/stand-ins/operator-site.ts';

// GET /api/readiness?site= (decisions §22) against stand-in sites on 127.0.0.1, which the outbound
// guard lets through only with OUTBOUND_ALLOW_LOOPBACK (and then over plain http).

type Key = 'https' | 'reachable' | 'verification_file' | 'oidc_client' | 'operator';
type Report = { site: string } & Record<Key, boolean> & { details: Record<Key, string>; checked_at: string };
const KEYS: Key[] = ['https', 'reachable', 'verification_file', 'oidc_client', 'operator'];

const TEN_MINUTES = 10 * 60_000;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`readiness (${backend})`, () => {
    let t: TestApp;
    let site: OperatorSite;
    let host = '';
    before(async () => {
      site = await startOperatorSite();
      host = new URL(site.origin).host;
      t = await testApp({ backend, env: { OUTBOUND_ALLOW_LOOPBACK: 'true' } });
    });
    after(async () => {
      await t.close();
      await site.close();
    });

    const ask = (siteParam: string | null, ip = remoteAddress()): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'GET', url: siteParam === null ? '/api/readiness' : `/api/readiness?site=${encodeURIComponent(siteParam)}`, remoteAddress: ip });
    const report = async (siteParam: string, ip?: string): Promise<Report> => {
      const res = await ask(siteParam, ip);
      expectStatus(res, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      return json<Report>(res);
    };

    it('bad site: 400 with a detail that says what a site looks like', async () => {
      for (const bad of [null, '', '   ', 'not a host', 'ftp://shop.example/', 'https://user:pw@shop.example/', 'https://', 'shop..example', 'shop.example:99999', 'shop.example/path', 'x'.repeat(3000), '[::1]', 'javascript:alert(1)']) {
        const res = await ask(bad);
        assert.equal(res.statusCode, 400, `${JSON.stringify(bad)}: ${res.body}`);
        assert.match(json<{ detail: string }>(res).detail, /host name|site/, String(bad));
      }
      // A NUL is refused by the service-wide guard, with its 422 shape.
      assert.equal((await ask('\u0000')).statusCode, 422);
      // A repeated parameter is not a 500 either.
      const twice = await t.app.inject({ method: 'GET', url: '/api/readiness?site=a.example&site=b.example', remoteAddress: remoteAddress() });
      assert.ok(twice.statusCode === 400 || twice.statusCode === 422, `${twice.statusCode} ${twice.body}`);
    });

    it('a site that is not there: no https, not reachable, the file not checked, nothing registered', async () => {
      const closed = `127.0.0.1:${await freePort()}`;
      const r = await report(`https://${closed}/some/page?x=1`);
      assert.equal(r.site, closed, 'only the host of an address counts');
      // The contract's shape (§22): five booleans, and for people why each is what it is.
      assert.deepEqual(Object.keys(r).sort(), ['checked_at', 'details', ...KEYS, 'site'].sort());
      for (const key of KEYS) assert.equal(typeof r[key], 'boolean', key);
      assert.deepEqual(Object.keys(r.details).sort(), [...KEYS].sort());
      for (const key of KEYS) assert.ok(typeof r.details[key] === 'string' && r.details[key].length > 0, key);
      assert.equal(r.https, false);
      assert.match(r.details.https, /no answer over https/);
      assert.equal(r.reachable, false);
      assert.match(r.details.reachable, /could not reach/);
      assert.equal(r.verification_file, false);
      assert.equal(r.details.verification_file, 'not checked: the site could not be reached');
      assert.equal(r.oidc_client, false);
      assert.equal(r.operator, false);
      assert.ok(Math.abs(Date.parse(r.checked_at) - t.clock.now()) < 1000);
    });

    it('a site with its file, an OIDC client and an operator registered here: every line, from one fetch of the file', async () => {
      const owner = await signUp(t.app);
      const client = json<{ id: string; verification: { line: string } }>(await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: owner.auth, payload: { name: 'Shop', redirect_uris: [`${site.origin}/cb`] } }));
      const opRes = await t.app.inject({ method: 'POST', url: '/api/operators', headers: owner.auth, payload: { name: 'Acme agents', redirect_uris: [`${site.origin}/cb`], browser: 'operator' } });
      expectStatus(opRes, 200);
      const op = json<{ id: string; verification: { line: string } }>(opRes);
      // Another owner's client elsewhere does not count.
      await t.app.inject({ method: 'POST', url: '/api/oidc/clients', headers: (await signUp(t.app)).auth, payload: { name: 'Other', redirect_uris: ['https://other.example/cb'] } });

      site.serve({ status: 200, body: `# ours\n${client.verification.line}\r\n${op.verification.line}\nmandate-client=c_unknown:zzz\n` });
      const before = site.requests.length;
      const r = await report(host);
      assert.equal(site.requests.length - before, 1, 'one fetch (https is refused before any connection: the stand-in speaks http)');
      assert.deepEqual(site.requests.at(-1), { method: 'GET', path: '/.well-known/service-site.txt', host });
      assert.equal(r.site, host);
      assert.equal(r.https, false, 'the stand-in speaks plain http');
      assert.equal(r.reachable, true);
      assert.match(r.details.reachable, /answered 200 over plain http, allowed only because OUTBOUND_ALLOW_LOOPBACK/);
      assert.equal(r.verification_file, true);
      assert.match(r.details.verification_file, /holds the line of 1 OIDC client and 1 operator registered on this instance/);
      assert.equal(r.oidc_client, true);
      assert.equal(r.details.oidc_client, `1 OIDC client registered on this instance with a redirect URI on ${host}; none verified yet`);
      assert.equal(r.operator, true);
      assert.equal(r.details.operator, `1 operator registered on this instance with the domain ${host}; 0 with the domain verified, 0 switched on by an admin`);
    });

    it('kept 10 minutes in the store: the same answer, no fetch; then checked again', async () => {
      site.serve({ status: 404, body: '' });
      const first = await report(`http://${host}/`);
      const fetches = site.requests.length;
      t.clock.advance(TEN_MINUTES - 1000);
      site.serve({ status: 500, body: 'down' });
      const again = await report(host);
      assert.deepEqual(again, first, 'served from the store');
      assert.equal(site.requests.length, fetches, 'the site was not fetched again');
      t.clock.advance(2000);
      const fresh = await report(host);
      assert.equal(site.requests.length, fetches + 1);
      assert.notEqual(fresh.checked_at, first.checked_at);
      assert.equal(fresh.reachable, false);
      assert.match(fresh.details.reachable, /answered 500, a server error/);
      assert.match(fresh.details.verification_file, /answered 500; it must answer 200/);
      // The store holds the cache (shared by every node); housekeeping deletes it once expired.
      assert.ok(await t.services.store.readiness.fresh(host, t.clock.now()));
      t.clock.advance(TEN_MINUTES);
      assert.ok((await t.services.store.readiness.purgeExpired(t.clock.now())) >= 1);
      assert.equal(await t.services.store.readiness.fresh(host, t.clock.now()), undefined);
    });

    it('a cached row that is not an answer (not JSON, an older shape, another site) is a miss: checked again, never a 500', async () => {
      site.serve({ status: 404, body: '' });
      const now = t.clock.now();
      const oldShape = JSON.stringify({ site: host, https: { ok: true, detail: 'x' }, reachable: { ok: true, detail: 'x' }, verification_file: { ok: true, detail: 'x' }, oidc_client: { ok: true, detail: 'x' }, operator: { ok: true, detail: 'x' }, checked_at: new Date(now).toISOString() });
      const good = { site: host, https: true, reachable: true, verification_file: true, oidc_client: true, operator: true, details: { https: 'a', reachable: 'b', verification_file: 'c', oidc_client: 'd', operator: 'e' }, checked_at: new Date(now).toISOString() };
      const rows = [
        'not json {',
        '',
        'null',
        '[]',
        '42',
        oldShape,
        JSON.stringify({ ...good, site: 'other.example' }),
        JSON.stringify({ ...good, https: 'yes' }),
        JSON.stringify({ ...good, details: { ...good.details, operator: 7 } }),
        JSON.stringify({ ...good, details: null }),
        JSON.stringify({ ...good, checked_at: 'yesterday' }),
      ];
      for (const row of rows) {
        await t.services.store.readiness.save({ site: host, report: row, checkedAt: now, expiresAt: now + TEN_MINUTES });
        const before = site.requests.length;
        const r = await report(host);
        assert.equal(site.requests.length, before + 1, `checked again over ${JSON.stringify(row).slice(0, 60)}`);
        assert.equal(r.site, host);
        assert.equal(r.verification_file, false);
        assert.match(r.details.verification_file, /answered 404/);
        // The new answer replaced the row: the next ask is served from it.
        assert.deepEqual(await report(host), r);
        assert.equal(site.requests.length, before + 1);
      }
      // A row in the current shape is served as stored, with nothing but the known fields.
      await t.services.store.readiness.save({ site: host, report: JSON.stringify({ ...good, extra: 'not served' }), checkedAt: now, expiresAt: now + TEN_MINUTES });
      const before = site.requests.length;
      assert.deepEqual(await report(host), good);
      assert.equal(site.requests.length, before);
      t.clock.advance(TEN_MINUTES);
    });

    it('the file missing, redirecting, or without a line of ours: readable details', async () => {
      const cases: [{ status?: number; body?: string; location?: string }, RegExp][] = [
        [{ status: 404, body: '' }, /answered 404: there is no file there yet/],
        [{ status: 302, location: 'https://elsewhere.example/file' }, /answered 302, a redirect to https:\/\/elsewhere\.example\/file; redirects are not followed/],
        [{ status: 200, body: 'hello\n' }, /is served \(6 bytes\) but holds no mandate-client= or mandate-operator= line/],
        [{ status: 200, body: 'mandate-client=c_x:y\n' }, /holds 1 mandate- line, but none of a client or operator registered on this instance/],
        [{ status: 200, body: 'x'.repeat(70_000) }, /larger than 64 kB/],
      ];
      for (const [answer, detail] of cases) {
        t.clock.advance(TEN_MINUTES);
        site.serve(answer);
        const r = await report(host);
        assert.equal(r.verification_file, false);
        assert.match(r.details.verification_file, detail);
      }
    });

    it('20 checks per hour per client address (cached answers too): then 429 with Retry-After; other addresses go on', async () => {
      const ip = remoteAddress();
      for (let i = 0; i < 20; i++) expectStatus(await ask(host, ip), 200);
      const limited = await ask(host, ip);
      assert.equal(limited.statusCode, 429, limited.body);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.match(json<{ detail: string }>(limited).detail, /rate limit/);
      expectStatus(await ask(host), 200);
      t.clock.advance(3600_000);
      expectStatus(await ask(host, ip), 200);
    });

    it('is in the OpenAPI description', async () => {
      const doc = json<{ paths: Record<string, { get?: { summary?: string; description?: string } }> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
      assert.match(doc.paths['/api/readiness']?.get?.description ?? '', /20 checks per hour/);
    });
  });
}

describe('readiness without OUTBOUND_ALLOW_LOOPBACK (as in production)', () => {
  let t: TestApp;
  let site: OperatorSite;
  before(async () => {
    site = await startOperatorSite();
    t = await testApp();
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  it('a loopback site is never fetched: not reachable, with the guard\'s reason', async () => {
    site.serve({ status: 200, body: 'mandate-client=c_x:y\n' });
    const res = await t.app.inject({ method: 'GET', url: `/api/readiness?site=${new URL(site.origin).host}`, remoteAddress: remoteAddress() });
    expectStatus(res, 200);
    const r = json<Report>(res);
    assert.equal(r.https, false);
    assert.match(r.details.https, /not a public address \(loopback\)/);
    assert.equal(r.reachable, false);
    assert.equal(site.requests.length, 0);
  });
});
