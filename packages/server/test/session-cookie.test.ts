import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus, json, remoteAddress, type TestApp, testApp } from './helpers/app.ts';

// The session cookie's name follows the scheme of BASE_URL (decisions §25): `__Host-session` on
// https, so that browsers accept it only as Secure, Path=/ and without Domain (no subdomain or
// plain-http page can plant one), and `session` on http://localhost, where the prefix cannot work.

const setCookies = (res: LightMyRequestResponse): string[] => {
  const h = res.headers['set-cookie'];
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
};

let seq = 0;
const signUpFresh = (t: TestApp): Promise<LightMyRequestResponse> =>
  t.app.inject({ method: 'POST', url: '/api/users', remoteAddress: remoteAddress(), payload: { email: `cookie${++seq}.${Date.now()}@example.com`, password: 'correct horse battery' } });

describe('session cookie on https', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { BASE_URL: 'https://mandate.example.com' } });
  });
  after(() => t.close());

  it('is __Host-session: Secure, HttpOnly, SameSite=Lax, Path=/, no Domain', async () => {
    const res = await signUpFresh(t);
    expectStatus(res, 200);
    const [cookie, ...more] = setCookies(res);
    assert.equal(more.length, 0, 'one cookie');
    const token = json<{ session_token: string }>(res).session_token;
    assert.ok(cookie?.startsWith(`__Host-session=${token};`), cookie);
    const attributes = (cookie ?? '').split(';').slice(1).map((a) => a.trim());
    for (const a of ['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/']) assert.ok(attributes.includes(a), `${a} in ${cookie}`);
    assert.ok(!attributes.some((a) => /^domain=/i.test(a)), `no Domain in ${cookie}`);
    assert.ok(attributes.some((a) => /^expires=/i.test(a)), 'a persistent cookie (30 days)');

    const login = await t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: remoteAddress(), payload: { email: json<{ user: { email: string } }>(res).user.email, password: 'correct horse battery' } });
    expectStatus(login, 200);
    assert.match(setCookies(login)[0] ?? '', /^__Host-session=[^;]+; .*Secure/);
  });

  it('is read under that name only: a plain `session` cookie is not a session there', async () => {
    const token = json<{ session_token: string }>(await signUpFresh(t)).session_token;
    expectStatus(await t.app.inject({ url: '/api/me', cookies: { '__Host-session': token } }), 200);
    expectStatus(await t.app.inject({ url: '/api/me', cookies: { session: token } }), 401);
    // State changes by cookie still need the service's own origin.
    const patch = (origin: string) => t.app.inject({ method: 'PATCH', url: '/api/me', cookies: { '__Host-session': token }, headers: { origin }, payload: { display_name: 'Ann' } });
    expectStatus(await patch('https://mandate.example.com'), 200);
    expectStatus(await patch('https://evil.example'), 403);
  });

  it('is cleared under the same name and attributes at logout', async () => {
    const token = json<{ session_token: string }>(await signUpFresh(t)).session_token;
    const out = await t.app.inject({ method: 'POST', url: '/api/logout', cookies: { '__Host-session': token }, headers: { origin: 'https://mandate.example.com' } });
    expectStatus(out, 200);
    const cleared = setCookies(out)[0] ?? '';
    assert.match(cleared, /^__Host-session=;/);
    assert.match(cleared, /Secure/);
    assert.match(cleared, /Path=\//);
    expectStatus(await t.app.inject({ url: '/api/me', cookies: { '__Host-session': token } }), 401);
  });
});

describe('session cookie on http://localhost', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('stays `session` (no Secure: the browser would drop it over http), and only that name is read', async () => {
    const res = await signUpFresh(t);
    const cookie = setCookies(res)[0] ?? '';
    const token = json<{ session_token: string }>(res).session_token;
    assert.ok(cookie.startsWith(`session=${token};`), cookie);
    assert.doesNotMatch(cookie, /Secure/);
    expectStatus(await t.app.inject({ url: '/api/me', cookies: { session: token } }), 200);
    expectStatus(await t.app.inject({ url: '/api/me', cookies: { '__Host-session': token } }), 401);
  });
});
