import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type TestApp, testApp } from '../../server/test/helpers/app.ts';
import { BASE_URL, docsOnDisk, linksIn } from './public-helpers.ts';

/**
 * Follows every same-origin link from the home page, /docs, the sitemap and llms.txt, through every
 * HTML page reached, and requires each to answer (no 4xx or 5xx), each `#fragment` to name an id on
 * its target page, and each link to another site to look reachable (issue 27: a bare
 * "http://localhost" in decisions.md had become a link to port 80 of the reader's machine).
 */
describe('public pages: the link crawl', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { BASE_URL } });
  });
  after(async () => t.close());

  /**
   * Why a link to another origin cannot work for a reader, or null when it looks reachable. Those
   * are not fetched (the tests have no network), so what is checked is the address itself: an
   * https (or mailto) link to a public host, not the reader's own machine (`http://localhost` went
   * to port 80) nor a name reserved for examples (RFC 2606, 6761).
   */
  function unreachable(link: string): string | null {
    const url = new URL(link, BASE_URL);
    if (url.protocol !== 'https:' && url.protocol !== 'mailto:') return `${url.protocol} link`;
    const host = url.protocol === 'mailto:' ? url.pathname.slice(url.pathname.lastIndexOf('@') + 1) : url.hostname.replace(/^\[|\]$/g, '');
    if (/^(?:localhost|127\.\d+\.\d+\.\d+|::1|0\.0\.0\.0)$|\.localhost$/i.test(host)) return 'the reader\'s own machine';
    if (/(?:^|\.)(?:example|test|invalid)$|(?:^|\.)example\.(?:com|org|net)$/i.test(host)) return 'an example host';
    return null;
  }

  /** A same-origin path for a link, or null for another origin or a non-HTTP scheme. */
  function sameOrigin(link: string, from: string): string | null {
    const url = new URL(link, BASE_URL + from);
    if (url.origin !== BASE_URL) return null;
    return url.pathname + url.search + url.hash;
  }

  it('every link of every public page resolves, fragments included, and no link points at an example or local host', async () => {
    const seeds = ['/', '/docs', '/sitemap.xml', '/llms.txt', '/robots.txt'];
    const queue: Array<{ link: string; from: string }> = seeds.map((link) => ({ link, from: '/' }));
    const pages = new Map<string, string>(); // path -> HTML, for fragment checks
    const visited = new Set<string>();
    const broken: string[] = [];
    const offSite = new Set<string>(); // links to other sites that look reachable
    const fragments: Array<{ path: string; id: string; from: string }> = [];

    while (queue.length > 0) {
      const { link, from } = queue.shift() ?? { link: '', from: '' };
      const target = sameOrigin(link, from);
      if (target === null) {
        const why = unreachable(link);
        if (why !== null) broken.push(`${link} (linked from ${from}): ${why}`);
        else offSite.add(link);
        continue;
      }
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
    assert.ok(offSite.size > 0, 'links to other sites were checked');
    // The crawl reached every doc and the public pages, so the checks above covered their links.
    for (const doc of docsOnDisk()) assert.ok(pages.has(`/docs/${doc.section}/${doc.page}`), `crawl missed ${doc.section}/${doc.page}`);
    for (const path of ['/', '/how-it-works', '/for-shops', '/docs', '/docs/agents', '/legal/privacy', '/legal/terms', '/pitch', '/check', '/tools/check-agent']) assert.ok(pages.has(path), `crawl missed ${path}`);

    const missing = fragments.filter(({ path, id }) => {
      const html = pages.get(path);
      return html === undefined || !html.includes(` id="${id}"`);
    });
    assert.deepEqual(missing.map((f) => `${f.path}#${f.id} (from ${f.from})`), []);
    assert.ok(fragments.length > 20, 'fragment links were checked');
  });
});
