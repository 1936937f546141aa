import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';
import { verifyEmail } from './helpers/email-links.ts';

describe('owner accounts', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { ADMIN_EMAILS: 'boss@example.com', LOGIN_MAX_PER_ACCOUNT: '5', LOGIN_MAX_PER_ADDRESS: '1000' } });
  });
  after(() => t.close());

  it('signs up, sets an HttpOnly SameSite=Lax session cookie and answers the session token', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 'Ann@Example.com', password: 'password123', display_name: 'Ann' } });
    assert.equal(res.statusCode, 200);
    const body = json<{ user: { id: string; email: string; role: string; display_name: string }; session_token: string }>(res);
    assert.match(body.user.id, /^u_[a-z2-7]{26}$/);
    assert.equal(body.user.email, 'ann@example.com');
    assert.equal(body.user.role, 'user');
    const cookie = String(res.headers['set-cookie']);
    assert.match(cookie, /^session=/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/, 'no Secure flag on http://localhost');
    assert.ok(cookie.includes(body.session_token));
  });

  it('does not give a taken email to a second account, and refuses a short password with 422', async () => {
    // Ann has not verified her address: the sign-up waits for the address's holder to confirm a
    // mailed link (202, no account, no session; address-takeover.test.ts). A verified address: 409 there.
    const res = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 'ANN@example.com', password: 'password123' } });
    assert.equal(res.statusCode, 202);
    assert.equal(json<{ pending: boolean }>(res).pending, true);
    assert.equal(res.headers['set-cookie'], undefined);
    const short = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 'new@example.com', password: 'short' } });
    assert.equal(short.statusCode, 422);
    assert.deepEqual(json<{ detail: { loc: unknown[] }[] }>(short).detail[0]?.loc, ['body', 'password']);
  });

  it('logs in by password; unknown email and wrong password answer the same 401', async () => {
    const ok = await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ann@example.com', password: 'password123' } });
    assert.equal(ok.statusCode, 200);
    const wrong = await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ann@example.com', password: 'nope-nope' } });
    const unknown = await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ghost@example.com', password: 'nope-nope' } });
    assert.equal(wrong.statusCode, 401);
    assert.deepEqual(json(wrong), { detail: 'invalid email or password' });
    assert.deepEqual(json(unknown), json(wrong));
  });

  it('gives a new session id at every sign-in', async () => {
    const a = json<{ session_token: string }>(await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ann@example.com', password: 'password123' } }));
    const b = json<{ session_token: string }>(await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: 'ann@example.com', password: 'password123' } }));
    assert.notEqual(a.session_token, b.session_token);
  });

  it('throttles sign-in per account with 429, Retry-After and retry_after', async () => {
    const owner = await signUp(t.app);
    let last;
    for (let i = 0; i < 6; i++) last = await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: owner.email, password: 'wrong-password' } });
    assert.equal(last?.statusCode, 429);
    const body = json<{ detail: string; retry_after: number }>(last!);
    assert.equal(body.detail, 'rate limit exceeded');
    assert.ok(body.retry_after >= 1);
    assert.equal(last?.headers['retry-after'], String(body.retry_after));
    // Even the right password waits until the window passes.
    const blocked = await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: owner.email, password: owner.password } });
    assert.equal(blocked.statusCode, 429);
    t.clock.advance(body.retry_after * 1000);
    const after = await t.app.inject({ method: 'POST', url: '/api/login', payload: { email: owner.email, password: owner.password } });
    assert.equal(after.statusCode, 200);
  });

  it('serves /api/me by bearer token and by cookie; PATCH updates the display name', async () => {
    const owner = await signUp(t.app);
    const me = await t.app.inject({ url: '/api/me', headers: owner.auth });
    assert.equal(me.statusCode, 200);
    const body = json<Record<string, unknown>>(me);
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'display_name', 'email', 'email_verified', 'grants', 'id', 'pending', 'phone', 'phone_verified', 'role', 'session_method', 'unread_notifications'].sort());
    assert.equal(body.email_verified, false, 'a new account\'s address is unverified until its mailed link is opened');
    assert.equal(body.session_method, 'password', 'the app tells a password session to approve on the phone that holds the passkey');
    assert.equal(body.phone, null);
    assert.deepEqual(body.pending, []);
    const viaCookie = await t.app.inject({ url: '/api/me', cookies: { session: owner.session_token } });
    assert.equal(viaCookie.statusCode, 200);
    const patched = await t.app.inject({ method: 'PATCH', url: '/api/me', headers: owner.auth, payload: { display_name: 'Zoe' } });
    assert.equal(json<{ display_name: string }>(patched).display_name, 'Zoe');
    assert.equal((await t.app.inject({ url: '/api/me' })).statusCode, 401);
    assert.equal((await t.app.inject({ url: '/api/me', headers: { authorization: 'Bearer nonsense-token-value' } })).statusCode, 401);
  });

  it('refuses cookie requests that change state from another origin, or cross-site without Origin', async () => {
    const owner = await signUp(t.app);
    const cookies = { session: owner.session_token };
    const evil = await t.app.inject({ method: 'PATCH', url: '/api/me', cookies, headers: { origin: 'https://evil.example' }, payload: { display_name: 'x' } });
    assert.equal(evil.statusCode, 403);
    const crossSite = await t.app.inject({ method: 'PATCH', url: '/api/me', cookies, headers: { 'sec-fetch-site': 'cross-site' }, payload: { display_name: 'x' } });
    assert.equal(crossSite.statusCode, 403);
    const same = await t.app.inject({ method: 'PATCH', url: '/api/me', cookies, headers: { origin: 'http://localhost:8080' }, payload: { display_name: 'y' } });
    assert.equal(same.statusCode, 200);
    // Reading is not state-changing; a bearer token is not a cookie and is not subject to the rule.
    assert.equal((await t.app.inject({ url: '/api/me', cookies, headers: { origin: 'https://evil.example' } })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'PATCH', url: '/api/me', headers: { ...owner.auth, origin: 'https://evil.example' }, payload: {} })).statusCode, 200);
  });

  it('logs out: the session stops working', async () => {
    const owner = await signUp(t.app);
    const out = await t.app.inject({ method: 'POST', url: '/api/logout', headers: owner.auth });
    assert.equal(out.statusCode, 200);
    assert.equal((await t.app.inject({ url: '/api/me', headers: owner.auth })).statusCode, 401);
  });

  it('expires sessions after 30 days', async () => {
    const owner = await signUp(t.app);
    t.clock.advance(30 * 86400 * 1000 - 1);
    assert.equal((await t.app.inject({ url: '/api/me', headers: owner.auth })).statusCode, 200);
    t.clock.advance(1);
    assert.equal((await t.app.inject({ url: '/api/me', headers: owner.auth })).statusCode, 401);
  });

  it('makes admins from ADMIN_EMAILS, case-insensitively, once the address is verified', async () => {
    const boss = await signUp(t.app, 'Boss@Example.com');
    assert.equal(json<{ role: string }>(await t.app.inject({ url: '/api/me', headers: boss.auth })).role, 'user', 'signing up with the address is not enough (decisions §25)');
    await verifyEmail(t, boss);
    assert.equal(json<{ role: string }>(await t.app.inject({ url: '/api/me', headers: boss.auth })).role, 'admin');
  });
});
