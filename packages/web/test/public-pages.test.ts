import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, testApp } from '../../server/test/helpers/app.ts';
import { BASE_URL, canonicalOf, docsOnDisk, inlineCode, linksIn, metaDescriptionOf, textOf, titleOf } from './public-helpers.ts';

/** Each page, a piece of its title and phrases that show it carries its real content. */
const PAGES = [
  { path: '/', title: 'Mandate', markers: ['authorization service for software agents', 'passkey', 'Works today', 'Planned', 'Self-hosters'], links: ['/app', '/how-it-works', '/for-shops', '/docs/agents'] },
  { path: '/how-it-works', title: 'How it works', markers: ['passkey', 'P-256', 'DPoP', 'Cloud mode', 'Local mode', 'step-up token', 'revocation list', 'Who learns what'], links: ['/app'] },
  { path: '/for-shops', title: 'for sites', markers: ['POST /api/v1/verify', 'insufficient_scope', 'stepup_required', 'Cheap checks come first', 'Cloud mode', 'Local mode', 'X-Service-Stepup'], links: [] },
  { path: '/docs', title: 'Documentation', markers: ['For agent developers', 'For sites', 'For operators', 'Reference', 'Operations', '/openapi.json'], links: ['/llms.txt', '/docs/operators/registering', '/docs/operators/consent'] },
  { path: '/docs/operators', title: 'operators', markers: ['For operators', 'register your company', 'Registering an operator', 'Connecting people'], links: ['/docs/operators/registering', '/docs/operators/consent'] },
  { path: '/docs/agents', title: 'agent developers', markers: ['POST /api/v1/authz-requests', 'POST /api/v1/token', 'POST /api/v1/stepup', 'POST /api/v1/agent-approval', 'X-Agent-JWT', 'DPoP', 'Numbers to know'], links: ['/docs/agents/quickstart', '/docs/agents/unattended'] },
  { path: '/legal/privacy', title: 'Privacy', markers: ['argon2id', 'IP address', 'passkey', 'activity trail', 'Download my data', 'Delete account', BASE_URL], links: ['/app'] },
  { path: '/legal/terms', title: 'Terms', markers: ['step-up', 'revoke', 'without warranty', BASE_URL], links: ['/legal/privacy'] },
] as const;

describe('public pages', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { BASE_URL } });
  });
  after(async () => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url });

  for (const page of PAGES) {
    it(`${page.path} is an HTML page with its title, description, canonical URL and real content`, async () => {
      const res = await get(page.path);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(String(res.headers['cache-control']), /^public, max-age=\d+$/);
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
      assert.ok(titleOf(res.body).includes(page.title), `title "${titleOf(res.body)}" lacks "${page.title}"`);
      assert.ok(metaDescriptionOf(res.body).length > 40, 'meta description');
      assert.equal(canonicalOf(res.body), BASE_URL + page.path);
      assert.match(res.body, /<html lang="en">/);
      assert.match(res.body, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
      const text = textOf(res.body);
      for (const marker of page.markers) assert.ok(text.includes(marker), `${page.path} lacks "${marker}"`);
      const links = linksIn(res.body);
      for (const link of [...page.links, '/legal/privacy', '/legal/terms', '/docs']) assert.ok(links.includes(link), `${page.path} lacks a link to ${link}`);
      assert.deepEqual(inlineCode(res.body), []);
      assert.doesNotMatch(text, /lorem ipsum|TODO|placeholder/i);
      // The legal pages describe what the software does today, never a promise of what it will do.
      if (page.path.startsWith('/legal/')) assert.doesNotMatch(text, /\bplanned\b|not (built|verified) yet/i);
    });
  }

  it('every page links one stylesheet and an icon, served by the service itself', async () => {
    const home = await get('/');
    const sheets = [...home.body.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1] ?? '');
    assert.equal(sheets.length, 1);
    assert.match(sheets[0] ?? '', /^\/assets\/public\.css\?v=[0-9a-f]+$/);
    const css = await get(sheets[0] ?? '');
    assert.equal(css.statusCode, 200);
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    assert.match(css.body, /@media/);
    assert.match(String(css.headers['cache-control']), /^public, max-age=\d+$/);
    const icon = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(home.body)?.[1] ?? '';
    const svg = await get(icon);
    assert.equal(svg.statusCode, 200);
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    assert.match(svg.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.doesNotMatch(svg.body, /<script|on[a-z]+=/i);
  });

  it('HEAD answers like GET without a body', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/how-it-works' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.body, '');
  });

  it('every doc file on disk has its page, titled by its first heading, with ids on its headings', async () => {
    const docs = docsOnDisk();
    assert.ok(docs.length >= 5, 'the repository has docs');
    for (const doc of docs) {
      const res = await get(`/docs/${doc.section}/${doc.page}`);
      assert.equal(res.statusCode, 200, `${doc.section}/${doc.page}`);
      assert.ok(titleOf(res.body).startsWith(doc.title), `${titleOf(res.body)} vs ${doc.title}`);
      assert.equal(canonicalOf(res.body), `${BASE_URL}/docs/${doc.section}/${doc.page}`);
      assert.match(res.body, /<h1 id="[a-z0-9-]+">/);
      assert.deepEqual(inlineCode(res.body), [], `${doc.section}/${doc.page}`);
      const source = await get(`/docs/${doc.section}/${doc.page}.md`);
      assert.equal(source.statusCode, 200);
      assert.equal(source.headers['content-type'], 'text/markdown; charset=utf-8');
      assert.ok(source.body.includes(`# ${doc.title.split(' ')[0]}`));
    }
  });

  it('/docs lists every section and every doc file on disk, under its title', async () => {
    const index = await get('/docs');
    const links = linksIn(index.body);
    const text = textOf(index.body);
    for (const doc of docsOnDisk()) {
      assert.ok(links.includes(`/docs/${doc.section}/${doc.page}`), `/docs lacks ${doc.section}/${doc.page}`);
      assert.ok(links.includes(`/docs/${doc.section}`), `/docs lacks section ${doc.section}`);
      assert.ok(text.includes(doc.title), `/docs lacks the title "${doc.title}"`);
    }
  });

  it('every section has its own page listing its docs', async () => {
    for (const doc of docsOnDisk()) {
      const res = await get(`/docs/${doc.section}`);
      assert.equal(res.statusCode, 200);
      assert.ok(linksIn(res.body).includes(`/docs/${doc.section}/${doc.page}`));
    }
  });

  it('robots.txt allows the pages, keeps crawlers out of the API and the app, and names the sitemap', async () => {
    const res = await get('/robots.txt');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    const lines = res.body.split('\n');
    for (const line of ['User-agent: *', 'Allow: /', 'Disallow: /api/', 'Disallow: /app', `Sitemap: ${BASE_URL}/sitemap.xml`]) {
      assert.ok(lines.includes(line), `robots.txt lacks "${line}"`);
    }
  });

  it('sitemap.xml lists every public page and doc page as an absolute URL under BASE_URL', async () => {
    const res = await get('/sitemap.xml');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.match(res.body, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/);
    const locs = [...res.body.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1] ?? '');
    assert.equal(new Set(locs).size, locs.length, 'no duplicates');
    for (const loc of locs) assert.ok(loc.startsWith(`${BASE_URL}/`), loc);
    // The pages the server renders per request (the challenge, the two checks) are listed too.
    const expected = [...PAGES.map((p) => p.path), '/pitch', '/challenge', '/check', '/tools/check-agent', ...docsOnDisk().flatMap((d) => [`/docs/${d.section}`, `/docs/${d.section}/${d.page}`])];
    for (const path of expected) assert.ok(locs.includes(BASE_URL + path), `sitemap lacks ${path}`);
    for (const loc of locs) {
      const res = await get(loc.slice(BASE_URL.length));
      assert.equal(res.statusCode, 200, loc);
    }
    assert.ok(!locs.some((l) => l.includes('/app') || l.includes('/api/')), 'no app or API addresses');
  });

  it('llms.txt follows llmstxt.org and links every doc page with an absolute URL', async () => {
    const res = await get('/llms.txt');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(res.body, /^# Mandate\n\n> \S/);
    assert.ok((res.body.match(/^## /gm) ?? []).length >= 3, 'sections of links');
    const links = [...res.body.matchAll(/^- \[([^\]]+)\]\(([^)]+)\)/gm)].map((m) => m[2] ?? '');
    for (const link of links) assert.ok(link.startsWith(`${BASE_URL}/`), link);
    for (const doc of docsOnDisk()) {
      assert.ok(links.includes(`${BASE_URL}/docs/${doc.section}/${doc.page}.md`), `llms.txt lacks ${doc.section}/${doc.page}`);
      assert.ok(res.body.includes(`[${doc.title}]`), `llms.txt lacks the title "${doc.title}"`);
    }
    assert.ok(links.includes(`${BASE_URL}/openapi.json`));
    for (const path of ['/check', '/tools/check-agent']) assert.ok(links.includes(`${BASE_URL}${path}`), `llms.txt lacks ${path}`);
  });

  it('the pages stay out of the OpenAPI description', async () => {
    const spec = (await get('/openapi.json')).json() as { paths: Record<string, unknown> };
    const paths = Object.keys(spec.paths);
    assert.ok(paths.length > 10, 'the API is described');
    // The API is /api, /oidc, the two OIDC discovery documents, the SDK tarballs npm fetches
    // (decisions §26), the WordPress plugin zip (a download with ETag and Content-Digest, §23), /healthz (the health check's short address, for load balancers), the
    // challenge's two routes, which answer agents in JSON (decisions §23), and the agents' Web Bot
    // Auth key directories (decisions §22); no page is in it.
    const api = /^\/(api|oidc)\/|^\/\.well-known\/(openid-configuration|oauth-authorization-server|http-message-signatures-directory)$|^\/download\/(agent|site|wordpress)$|^\/healthz$|^\/challenge(\/claim)?$|^\/wba\/\{label\}/;
    for (const path of paths) assert.match(path, api, `${path} is in /openapi.json`);
    for (const page of ['/', '/app', '/docs', '/tools/check-agent', '/sw.js', '/.well-known/assetlinks.json', '/download/android']) assert.ok(!paths.includes(page), `${page} is in /openapi.json`);
  });

  it('pages use the configured BASE_URL, not the address they were requested at', async () => {
    const other = await testApp({ env: { BASE_URL: 'https://agents.other.example' } });
    try {
      const home = await other.app.inject({ url: '/', headers: { host: 'evil.example' } });
      assert.equal(canonicalOf(home.body), 'https://agents.other.example/');
      const sitemap = await other.app.inject({ url: '/sitemap.xml', headers: { host: 'evil.example' } });
      assert.match(sitemap.body, /<loc>https:\/\/agents\.other\.example\/docs<\/loc>/);
      assert.doesNotMatch(sitemap.body + home.body, /evil\.example|mandate\.example\.test/);
    } finally {
      await other.close();
    }
  });
});
