import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type TestApp, testApp } from '../../server/test/helpers/app.ts';
import { BASE_URL, inlineCode, titleOf } from './public-helpers.ts';

/** Paths under /docs and /legal that name no page: each gets the HTML 404 page. */
const NOT_PAGES = [
  '/docs/..%2f..%2fetc/passwd',
  '/docs/..%2F..%2Fpackage.json',
  '/docs/agents/..%2f..%2f..%2fpackage',
  '/docs/agents%2fquickstart',
  '/docs/agents/quickstart%2e%2e',
  '/docs/agents/.quickstart',
  '/docs/nope',
  '/docs/nope/quickstart',
  '/docs/agents/nope',
  '/docs/AGENTS/quickstart',
  '/docs/agents/QUICKSTART',
  '/docs/agents/quick_start',
  '/docs/agents/quickstart.MD',
  '/docs/agents/quickstart.md.bak',
  '/docs/agents/quickstart.html',
  '/docs/agents/quickstart/extra',
  '/docs/agents/quickstart;x=1',
  '/docs/agents/quickstart%20',
  `/docs/${'a'.repeat(300)}/${'b'.repeat(300)}`,
  '/docs/agents/%3Cscript%3Ealert(1)%3C%2Fscript%3E',
  '/legal',
  '/legal/nope',
  '/legal/privacy.md',
  '/legal/..%2fprivacy',
  '/legal/privacy/extra',
  '/legal/PRIVACY',
];

/** Malformed in other ways (NUL, broken percent-encoding, odd characters): any 4xx, never a 5xx. */
const MALFORMED = [
  '/docs/agents/quickstart%00',
  '/docs/%00/x',
  '/docs/%E0%A4%A',
  '/docs/%',
  '/legal/%ff',
  '/docs/agents/quickstart%0d%0aSet-Cookie:%20x=1',
  '/docs/\u00e9t\u00e9',
];

describe('public pages: unknown and hostile paths', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { BASE_URL } });
  });
  after(async () => t.close());

  for (const path of NOT_PAGES) {
    it(`${path.slice(0, 80)} -> the HTML 404 page`, async () => {
      const res = await t.app.inject({ method: 'GET', url: path });
      assert.equal(res.statusCode, 404, res.body.slice(0, 200));
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
      assert.equal(titleOf(res.body), 'Page not found · Mandate');
      assert.match(res.body, /<meta name="robots" content="noindex">/);
      assert.deepEqual(inlineCode(res.body), []);
      assert.doesNotMatch(res.body, /root:|"name": "mandate"|alert\(1\)/);
    });
  }

  for (const path of MALFORMED) {
    it(`${JSON.stringify(path)} -> a 4xx, never a 5xx`, async () => {
      const res = await t.app.inject({ method: 'GET', url: path });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.equal(res.headers['set-cookie'], undefined);
    });
  }

  it('a trailing slash redirects to the page without it, and only to a page of this site', async () => {
    for (const [from, to] of [['/docs/', '/docs'], ['/docs/agents/', '/docs/agents'], ['/docs/reference/api/', '/docs/reference/api'], ['/legal/privacy/', '/legal/privacy']]) {
      const res = await t.app.inject({ method: 'GET', url: from ?? '' });
      assert.equal(res.statusCode, 301, from);
      assert.equal(res.headers.location, to);
    }
    for (const path of ['/docs/nope/', '/docs//evil.example/', '/legal/nope/']) {
      const res = await t.app.inject({ method: 'GET', url: path });
      assert.equal(res.statusCode, 404, path);
      assert.equal(res.headers.location, undefined);
    }
  });

  it('a query string is never reflected into a page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs?q=%3Cscript%3Ealert(1)%3C/script%3E&x=%22%3E' });
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /alert\(1\)|<script/);
  });

  it('dot segments sent raw over HTTP (app.inject would normalise them) reach no file', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const rawGet = (path: string) => new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      });
      req.on('error', reject);
      req.end();
    });
    for (const path of ['/docs/../../../../etc/passwd', '/docs/agents/../../package.json', '/legal/../../../etc/hostname', '/docs/./agents/../../README.md', '/docs/%2e%2e/%2e%2e/etc/passwd', '/docs/agents/%2e%2e/%2e%2e/%2e%2e/package.json']) {
      const res = await rawGet(path);
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      assert.doesNotMatch(res.body, /root:|"workspaces"|# Mandate/, path);
      if (path.startsWith('/docs/') || path.startsWith('/legal/')) assert.equal(res.type, 'text/html; charset=utf-8', path);
    }
  });
});
