import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './helpers/child-process.ts';
import { GUIDE, GUIDE_SITE, readGuide, registerExample } from './helpers/oidc-guide.ts';

// docs/sites/oidc.md registers one site and then sets it up with Auth.js or openid-client: every
// callback (redirect URI) and back-channel logout address it or its example sites name must be the
// Register example's, or a reader registers one address while their site serves another (issue 27:
// the Register example said /auth/callback, the openid-client site served /callback). That the
// set-ups really serve these addresses is proven by test/e2e/authjs.e2e.test.ts, which registers its
// sites with the Register example's body.

const SITE_DIRS = ['examples/authjs-site', 'examples/openid-client'];
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'; // a claim name, not an address

/** The guide and its example sites' sources, each with its name. */
function texts(): [string, string][] {
  const files = SITE_DIRS.flatMap((dir) => readdirSync(join(REPO_ROOT, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`));
  return [[GUIDE, readGuide()], ...files.map((f): [string, string] => [f, readFileSync(join(REPO_ROOT, f), 'utf8')])];
}

/**
 * Every path ending in (or passing through) `segment`, origins stripped first: https://shop.example,
 * http://localhost:3000, <SITE_URL>, <site> and ${siteUrl} all stand for the site.
 */
function pathsNaming(text: string, segment: string): string[] {
  const bare = text.replaceAll(LOGOUT_EVENT, '').replace(/https?:\/\/[^/\s"'`]+|<\w+>|\$\{\w+\}/g, '');
  const path = new RegExp(String.raw`(?<![\w./-])(?:/[\w.-]+)*/${segment}\b(?:/[\w-]+)*`, 'g');
  return [...bare.matchAll(path)].map((m) => m[0]);
}

describe(`${GUIDE}: one site, one registration`, () => {
  const { request, answer } = registerExample();

  it('the Register example registers the shop of the set-ups, and its answer shows the same addresses', () => {
    assert.equal(request.redirect_uris.length, 1, 'one redirect URI: the one both set-ups serve');
    assert.ok(request.redirect_uris[0]?.startsWith(`${GUIDE_SITE}/`), request.redirect_uris[0]);
    assert.ok(request.backchannel_logout_uri?.startsWith(`${GUIDE_SITE}/`), request.backchannel_logout_uri);
    assert.deepEqual([answer.redirect_uris, answer.backchannel_logout_uri], [request.redirect_uris, request.backchannel_logout_uri]);
  });

  for (const [what, segment, uri] of [
    ['callback (redirect URI)', 'callback', request.redirect_uris[0] ?? ''],
    ['back-channel logout address', 'backchannel-logout', request.backchannel_logout_uri ?? ''],
  ] as const) {
    it(`every ${what} in the guide and its example sites is the Register example's`, () => {
      const expected = new URL(uri).pathname;
      const found = texts().flatMap(([file, text]) => pathsNaming(text, segment).map((p) => `${file}: ${p}`));
      assert.ok(found.length > 3, `found too few to be a check: ${found.join(', ')}`);
      assert.deepEqual(found.filter((f) => !f.endsWith(`: ${expected}`)), [], `the Register example says ${expected}`);
    });
  }
});
