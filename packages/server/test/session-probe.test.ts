import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';

// Issue 27, item 14: the owner app asks GET /api/session on opening, so a signed-out visit makes no
// 401 (a browser logs every 401 as a console error). GET /api/me stays 401 for everyone signed out.

describe('GET /api/session', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('answers 200 signed_in false without a session, true with a cookie or bearer token; /api/me stays 401', async () => {
    const owner = await signUp(t.app);
    const ask = async (opts: { headers?: Record<string, string>; cookies?: Record<string, string> } = {}) => {
      const res = await t.app.inject({ url: '/api/session', ...opts });
      expectStatus(res, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      return json<{ signed_in: boolean }>(res);
    };
    assert.deepEqual(await ask(), { signed_in: false });
    assert.deepEqual(await ask({ cookies: { session: 'not-a-session' } }), { signed_in: false });
    assert.deepEqual(await ask({ headers: { authorization: 'Bearer nonsense-token-value' } }), { signed_in: false });
    assert.deepEqual(await ask({ cookies: { session: owner.session_token } }), { signed_in: true });
    assert.deepEqual(await ask({ headers: owner.auth }), { signed_in: true });

    expectStatus(await t.app.inject({ url: '/api/me' }), 401);
    expectStatus(await t.app.inject({ url: '/api/me', cookies: { session: 'not-a-session' } }), 401);
    expectStatus(await t.app.inject({ url: '/api/me', headers: { authorization: 'Bearer nonsense-token-value' } }), 401);

    expectStatus(await t.app.inject({ method: 'POST', url: '/api/logout', headers: owner.auth }), 200);
    assert.deepEqual(await ask({ headers: owner.auth }), { signed_in: false }, 'a session that ended');
  });
});
