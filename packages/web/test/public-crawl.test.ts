import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, testApp } from '../../server/test/helpers/app.ts';
import { BASE_URL, docsOnDisk, linksIn } from './public-helpers.ts';

/**
 * Follows every same-origin link from the home page, the sitemap and llms.txt, through every HTML
 * page reached, and requires each to answer (no 4xx or 5xx), and each `#fragment` to name an id on
 * its target page.
 */
describe('public pages: the link crawl', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { BASE_URL } });
  });
  after(async () => t.close());

  /** A same-origin path for a link, or null for another origin or a non-HTTP scheme. */
  function sameOrigin(link: string, from: string): string | null {
    const url = new URL(link, BASE_URL + from);
    if (url.origin !== BASE_URL) return null;
    return url.pathname + url.search + url.hash;
  }

  it('every same-origin link of every public page resolves, fragments included', async () => {
    const seeds = ['/', '/sitemap.xml', '/llms.txt', '/robots.txt'];
    const queue: Array<{ link: string; from: string }> = seeds.map((link) => ({ link, from: '/' }));
    const pages = new Map<string, string>(); // path -> HTML, for fragment checks
    const visited = new Set<string>();
    const broken: string[] = [];
    const fragments: Array<{ path: string; id: string; from: string }> = [];

    while (queue.length > 0) {
      const { link, from } = queue.shift() ?? { link: '', from: '' };
      const target = sameOrigin(link, from);
      if (target === null) continue;
      const [pathAndQuery = '', id] = target.split('#');
      if (id) fragments.push({ path: pathAndQuery.split('?')[0] ?? '', id: decodeURIComponent(id), from });
      if (visited.has(pathAndQuery)) continue;
      visited.add(pathAndQuery);

      const res = await t.app.inject({ method: 'GET', url: pathAndQuery });
      if (res.statusCode >= 400) {
        broken.push(`${pathAndQuery} (linked from ${from}): ${res.statusCode}`);
        continue;
      }
      const type = String(res.headers['content-type']);
      const path = pathAndQuery.split('?')[0] ?? '';
      if (type.startsWith('text/html') && !path.startsWith('/app')) {
        pages.set(path, res.body);
        for (const next of linksIn(res.body)) queue.push({ link: next, from: path });
      } else if (path === '/sitemap.xml') {
        for (const m of res.body.matchAll(/<loc>([^<]*)<\/loc>/g)) queue.push({ link: m[1] ?? '', from: path });
      } else if (path === '/llms.txt') {
        for (const m of res.body.matchAll(/\]\(([^)]+)\)/g)) queue.push({ link: m[1] ?? '', from: path });
      } else if (path === '/robots.txt') {
        for (const m of res.body.matchAll(/^Sitemap: (\S+)$/gm)) queue.push({ link: m[1] ?? '', from: path });
      }
    }

    assert.deepEqual(broken, []);
    // The crawl reached every doc and the public pages, so the checks above covered their links.
    for (const doc of docsOnDisk()) assert.ok(pages.has(`/docs/${doc.section}/${doc.page}`), `crawl missed ${doc.section}/${doc.page}`);
    for (const path of ['/', '/how-it-works', '/for-shops', '/docs', '/docs/agents', '/legal/privacy', '/legal/terms']) assert.ok(pages.has(path), `crawl missed ${path}`);

    const missing = fragments.filter(({ path, id }) => {
      const html = pages.get(path);
      return html === undefined || !html.includes(` id="${id}"`);
    });
    assert.deepEqual(missing.map((f) => `${f.path}#${f.id} (from ${f.from})`), []);
    assert.ok(fragments.length > 20, 'fragment links were checked');
  });
});
