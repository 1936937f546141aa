import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { prefersHtml } from '../src/http/not-found.ts';
import { testApp, type TestApp } from './helpers/app.ts';

/** What Chromium sends when navigating to an address. */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
const FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('unknown addresses: the HTML 404 page for browsers, JSON for the API', () => {
  let t: TestApp;
  let page404: string;
  before(async () => {
    t = await testApp();
    // The page unknown /legal addresses already got: the one every browser 404 must reuse.
    const legal = await t.app.inject({ url: '/legal/nope' });
    assert.equal(legal.statusCode, 404);
    page404 = legal.body;
    assert.match(page404, /<title>Page not found · Mandate<\/title>/);
  });
  after(() => t.close());

  const get = (url: string, accept?: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') =>
    t.app.inject({ method, url, headers: accept === undefined ? {} : { accept } });

  for (const [url, accept] of [['/nope', BROWSER], ['/nope', FIREFOX], ['/docs/nope', BROWSER], ['/nope/deeper?x=1', BROWSER], ['/app/nope', BROWSER], ['/apis', BROWSER], ['/oidcx/nope', BROWSER], ['/nope', 'text/html']] as const) {
    it(`GET ${url} from a browser (${accept.slice(0, 24)}...) -> the HTML 404 page`, async () => {
      const res = await get(url, accept);
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.body, page404);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
    });
  }

  it('HEAD from a browser gets the HTML 404 headers without a body', async () => {
    const res = await get('/nope', BROWSER, 'HEAD');
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.body, '');
  });

  const jsonCases: Array<[method: 'GET' | 'POST', url: string, accept: string | undefined, why: string]> = [
    ['GET', '/api/nope', BROWSER, 'the API keeps JSON whatever the client accepts'],
    ['GET', '/api', BROWSER, 'the API root too'],
    ['GET', '/api/v1/nope?x=1', 'text/html', 'the agent API'],
    ['GET', '/oidc/nope', BROWSER, 'the OIDC endpoints'],
    ['GET', '/.well-known/nope', BROWSER, 'well-known files'],
    ['GET', '/nope', undefined, 'no Accept: an API client'],
    ['GET', '/nope', '*/*', 'a bare wildcard: curl, fetch, the SDKs'],
    ['GET', '/nope', 'application/json', 'asking for JSON'],
    ['GET', '/nope', 'application/json, text/html', 'a tie goes to JSON'],
    ['GET', '/nope', 'text/html;q=0.5, application/json', 'JSON preferred'],
    ['GET', '/nope', 'text/html;q=0', 'HTML refused'],
    ['POST', '/nope', BROWSER, 'only GET and HEAD are page views'],
  ];
  for (const [method, url, accept, why] of jsonCases) {
    it(`${method} ${url} with Accept ${accept ?? '(none)'} -> JSON {detail} (${why})`, async () => {
      const res = await get(url, accept, method);
      assert.equal(res.statusCode, 404);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(res.json(), { detail: `not found: ${method} ${url.split('?')[0]}` });
      assert.equal(res.headers['content-security-policy'], undefined);
    });
  }

  it('answers outside the API vary by Accept (a cache must not hand the page to an API client)', async () => {
    assert.equal((await get('/nope', BROWSER)).headers.vary, 'accept');
    assert.equal((await get('/nope')).headers.vary, 'accept');
    assert.equal((await get('/api/nope', BROWSER)).headers.vary, undefined);
  });

  it('known addresses are untouched: pages stay pages and the API stays JSON for a browser', async () => {
    const home = await get('/', BROWSER);
    assert.equal(home.statusCode, 200);
    const health = await get('/api/healthz', BROWSER);
    assert.equal(health.statusCode, 200);
    assert.match(String(health.headers['content-type']), /^application\/json/);
  });
});

describe('prefersHtml: reading Accept', () => {
  it('is true only when HTML is named and ranked above JSON', () => {
    for (const accept of [BROWSER, FIREFOX, 'text/html', 'application/xhtml+xml', 'TEXT/HTML', 'application/json;q=0.1, text/html', 'text/html;q=0.2']) {
      assert.equal(prefersHtml(accept), true, accept);
    }
    for (const accept of [undefined, '', '*/*', 'text/*', 'application/json', 'text/html, application/json', 'text/html;q=0', 'text/html;q=abc', 'text/htmlx', ',,;']) {
      assert.equal(prefersHtml(accept), false, String(accept));
    }
  });
});
