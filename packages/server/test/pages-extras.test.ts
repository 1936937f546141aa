import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { shellVersion } from '@mandate/web';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { startOperatorSite, type OperatorSite } from './helpers/stand-ins/operator-site.ts';

// /api/page-version, /api/browserinfo, /pitch, /check and where the new pages are listed (decisions §23).

describe('page version, browser info, /pitch and /check', () => {
  let t: TestApp;
  let site: OperatorSite;
  before(async () => {
    site = await startOperatorSite();
    t = await testApp({ env: { BASE_URL: 'https://mandate.example:8443', OUTBOUND_ALLOW_LOOPBACK: 'true' } });
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  it('GET /api/page-version is the version the app page loads its assets with, and changes when any asset changes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/page-version' });
    expectStatus(res, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const { version } = json<{ version: string }>(res);
    assert.match(version, /^[A-Za-z0-9_-]{12}$/);
    const page = (await t.app.inject({ method: 'GET', url: '/app' })).body;
    assert.ok(page.includes(`/assets/app/app.js?v=${version}`), 'the page names its script with this version');
    // The version is a hash of every asset: change one byte of any one and it changes.
    const parts = ['script', 'css', Buffer.from([1, 2, 3])];
    assert.equal(shellVersion(parts), shellVersion(['script', 'css', Buffer.from([1, 2, 3])]));
    assert.notEqual(shellVersion(parts), shellVersion(['script', 'css.', Buffer.from([1, 2, 3])]));
    assert.notEqual(shellVersion(parts), shellVersion(['script', 'css', Buffer.from([1, 2, 4])]));
  });

  it('GET /api/browserinfo: what passkeys are bound to here, and the User-Agent as seen', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/browserinfo', headers: { 'user-agent': `Test/1.0 ${'x'.repeat(600)}` } });
    expectStatus(res, 200);
    const info = json<{ rp_id: string; origin: string; secure_context_required: boolean; user_agent: string }>(res);
    assert.equal(info.rp_id, 'mandate.example');
    assert.equal(info.origin, 'https://mandate.example:8443');
    assert.equal(info.secure_context_required, true);
    assert.equal(info.user_agent.length, 512);
    assert.ok(info.user_agent.startsWith('Test/1.0 '));
  });

  it('/pitch, /challenge, /check and /tools/check-agent are in the sitemap, llms.txt and the navigation; JSON routes in the OpenAPI description', async () => {
    const sitemap = (await t.app.inject({ method: 'GET', url: '/sitemap.xml' })).body;
    for (const path of ['/pitch', '/challenge', '/check', '/tools/check-agent']) assert.ok(sitemap.includes(`<loc>https://mandate.example:8443${path}</loc>`), path);
    const llms = (await t.app.inject({ method: 'GET', url: '/llms.txt' })).body;
    for (const path of ['/pitch', '/challenge/agents.txt', '/check', '/api/readiness?site=', '/tools/check-agent', '/api/v1/check-agent']) assert.ok(llms.includes(`https://mandate.example:8443${path}`), path);
    const pitch = await t.app.inject({ method: 'GET', url: '/pitch' });
    expectStatus(pitch, 200);
    assert.match(pitch.body, /<a href="\/pitch" aria-current="page">Why Mandate<\/a>/);
    assert.match(pitch.body, /<a href="\/challenge">Try it<\/a>/);
    assert.match(pitch.body, /<a href="\/check">Check a site<\/a>/);
    assert.match(pitch.body, /<a href="\/tools\/check-agent">Check an agent<\/a>/);
    // The footer is on the pages the server renders per request too, each linking the other.
    for (const path of ['/check', '/tools/check-agent']) {
      const page = await t.app.inject({ method: 'GET', url: path, remoteAddress: remoteAddress() });
      expectStatus(page, 200);
      assert.match(page.body, /<a href="\/check">Check a site<\/a>/, path);
      assert.match(page.body, /<a href="\/tools\/check-agent">Check an agent<\/a>/, path);
    }
    assert.doesNotMatch(pitch.body, /\d+\s?%/, 'no invented figures');
    const challenge = (await t.app.inject({ method: 'GET', url: '/challenge' })).body;
    assert.ok(challenge.includes('<code>mandate.example:8443</code>'), 'the challenge names the site id: the host of BASE_URL');
    const doc = json<{ paths: Record<string, Record<string, { summary?: string }>> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    for (const [path, method] of [['/api/page-version', 'get'], ['/api/browserinfo', 'get'], ['/api/readiness', 'get'], ['/challenge', 'get'], ['/challenge/claim', 'post']] as const) {
      assert.ok(doc.paths[path]?.[method]?.summary, `${method} ${path}`);
    }
    assert.equal(doc.paths['/check'], undefined, 'pages are not API');
  });

  it('/check: the form; a result with what to do for each failing line; bad input and the limit shown in words', async () => {
    const form = await t.app.inject({ method: 'GET', url: '/check', remoteAddress: remoteAddress() });
    expectStatus(form, 200);
    assert.match(form.body, /<form class="check-form" method="get" action="\/check">/);
    assert.doesNotMatch(form.body, /check-lines/);

    const host = new URL(site.origin).host;
    site.serve({ status: 404, body: '' });
    const ip = remoteAddress();
    const result = await t.app.inject({ method: 'GET', url: `/check?site=${encodeURIComponent(host)}`, remoteAddress: ip });
    expectStatus(result, 200);
    assert.equal(result.headers['cache-control'], 'no-store');
    assert.ok(result.body.includes(`value="${host}"`));
    assert.match(result.body, /<li class="check-fail">\s*<h3><span class="check-mark">No<\/span> Answers over https/);
    assert.match(result.body, /<li class="check-ok">\s*<h3><span class="check-mark">Yes<\/span> Reachable from this service/);
    assert.match(result.body, /answered 404: there is no file there yet/);
    assert.equal(result.body.match(/What to do:/g)?.length, 4, 'https, the file, the client and the operator fail; reachable does not');

    const bad = await t.app.inject({ method: 'GET', url: `/check?site=${encodeURIComponent('<script>alert(1)</script>')}`, remoteAddress: remoteAddress() });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /role="alert">Site &quot;&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot; is not a host name/);
    assert.doesNotMatch(bad.body, /<script>alert/);

    for (let i = 1; i < 20; i++) await t.app.inject({ method: 'GET', url: `/check?site=${host}`, remoteAddress: ip });
    const limited = await t.app.inject({ method: 'GET', url: `/check?site=${host}`, remoteAddress: ip });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.match(limited.body, /Too many checks from your address: try again in \d+ minutes/);
  });
});
