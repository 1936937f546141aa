import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { AT, SoftAuthenticator, UP } from './helpers/soft-authenticator.ts';

// Registration, sign-in, counters and approvals through the real verifier, with the shared software
// authenticator standing in for a passkey. The e2e test covers a real one.

const b64u = (b: Buffer): string => b.toString('base64url');

type Owner = Awaited<ReturnType<typeof signUp>>;
interface Options { challenge: string; options: Record<string, unknown> }

let t: TestApp;
before(async () => {
  t = await testApp();
});
after(async () => {
  await t.close();
});

// Each request from its own client address, so the per-address sign-in throttle (tested on its own
// app below) does not trip over the many sign-ins of this file.
const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers, remoteAddress: remoteAddress() });
const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, payload: payload as object, headers, remoteAddress: remoteAddress() });

async function registerOptions(owner: Owner): Promise<Options> {
  const res = await get('/api/webauthn/register/options', owner.auth);
  expectStatus(res, 200);
  return json<Options>(res);
}

async function register(owner: Owner, auth = new SoftAuthenticator(), name?: string): Promise<{ auth: SoftAuthenticator; deviceId: string }> {
  const { challenge } = await registerOptions(owner);
  const res = await post('/api/webauthn/register/verify', { challenge, attestation: auth.register(challenge), ...(name ? { name } : {}) }, owner.auth);
  expectStatus(res, 200);
  return { auth, deviceId: json<{ device_id: string }>(res).device_id };
}

async function loginOptions(email: string): Promise<Options> {
  const res = await get(`/api/webauthn/login/options?email=${encodeURIComponent(email)}`);
  expectStatus(res, 200);
  return json<Options>(res);
}

/**
 * The owner signed in again with their passkey: adding a second passkey or removing one needs such
 * a session (a password session may only add the first).
 */
async function passkeySession(owner: Owner, auth: SoftAuthenticator): Promise<Owner> {
  const { challenge } = await loginOptions(owner.email);
  const res = await post('/api/webauthn/login/verify', { challenge, assertion: auth.assert(challenge) });
  expectStatus(res, 200);
  return { ...owner, auth: { authorization: `Bearer ${json<{ session_token: string }>(res).session_token}` } };
}

/** Keys (recursively) and values, challenges blanked: what would differ between two answers. */
function shape(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(shape);
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).sort().map(([k, v]) => [k, k === 'challenge' ? '*' : shape(v)]));
  return x;
}

describe('passkey registration', () => {
  test('options: RP localhost, user verification and discoverable credential required, ES256/RS256, challenge echoed', async () => {
    const owner = await signUp(t.app);
    const { challenge, options } = await registerOptions(owner);
    assert.match(challenge, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(options.challenge, challenge);
    assert.deepEqual(options.rp, { name: 'Mandate', id: 'localhost' });
    assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
    assert.deepEqual((options.pubKeyCredParams as { alg: number }[]).map((p) => p.alg), [-7, -257]);
    assert.equal((options.user as { name: string }).name, owner.email);
    assert.equal(options.timeout, 300000);
    assert.deepEqual(options.excludeCredentials, []);
  });

  test('a soft authenticator registers; the name defaults from the user agent; existing credentials are excluded', async () => {
    const owner = await signUp(t.app);
    const auth = new SoftAuthenticator();
    const { challenge } = await registerOptions(owner);
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
    const res = await post('/api/webauthn/register/verify', { challenge, attestation: auth.register(challenge) }, { ...owner.auth, 'user-agent': ua });
    expectStatus(res, 200);
    const body = json<{ verified: boolean; device_id: string }>(res);
    assert.equal(body.verified, true);
    assert.match(body.device_id, /^dev_[a-z2-7]{26}$/);
    const devices = json<Record<string, unknown>[]>(await get('/api/devices', owner.auth));
    assert.equal(devices.length, 1);
    assert.deepEqual(Object.keys(devices[0] ?? {}).sort(), ['created_at', 'id', 'kind', 'last_used_at', 'name', 'paused_until']);
    assert.equal(devices[0]?.name, 'Passkey (Chrome on Linux)');
    assert.equal(devices[0]?.paused_until, null, 'a passkey is never paused');
    assert.equal(devices[0]?.kind, 'passkey');
    assert.equal(devices[0]?.last_used_at, null);
    const again = await registerOptions(await passkeySession(owner, auth));
    assert.deepEqual((again.options.excludeCredentials as { id: string }[]).map((c) => c.id), [auth.id]);
  });

  test('a given name is kept; without a user agent the name is "Passkey"', async () => {
    const owner = await signUp(t.app);
    const phone = await register(owner, new SoftAuthenticator(), 'My phone');
    await register(await passkeySession(owner, phone.auth));
    const names = json<{ name: string }[]>(await get('/api/devices', owner.auth)).map((d) => d.name);
    assert.deepEqual(names.sort(), ['My phone', 'Passkey']);
  });

  test('401 without a session', async () => {
    expectStatus(await get('/api/webauthn/register/options'), 401);
    expectStatus(await post('/api/webauthn/register/verify', { challenge: 'x', attestation: {} }), 401);
    expectStatus(await get('/api/devices'), 401);
    expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/devices/dev_x' }), 401);
  });

  test('422 on malformed bodies', async () => {
    const owner = await signUp(t.app);
    for (const body of [{}, { challenge: 'abc' }, { challenge: 'abc', attestation: 'text' }, { challenge: 5, attestation: {} }, { challenge: 'abc', attestation: [] }, { challenge: 'abc', attestation: {}, name: '' }]) {
      const res = await post('/api/webauthn/register/verify', body, owner.auth);
      expectStatus(res, 422);
      assert.ok(Array.isArray(json<{ detail: unknown[] }>(res).detail));
    }
  });

  test('garbage or forged attestations are 400, never 5xx', async () => {
    const owner = await signUp(t.app);
    const auth = new SoftAuthenticator();
    const forged = [
      () => ({}),
      () => ({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' } }),
      (c: string) => ({ ...auth.register(c), response: { ...auth.register(c).response, attestationObject: b64u(randomBytes(64)) } }),
      (c: string) => auth.register(c, { origin: 'https://evil.example' }),
      (c: string) => auth.register(c, { flags: UP | AT }),
      (c: string) => auth.register(b64u(randomBytes(32))),
      (c: string) => new SoftAuthenticator({ rpId: 'evil.example' }).register(c),
    ];
    for (const make of forged) {
      const { challenge } = await registerOptions(owner);
      const res = await post('/api/webauthn/register/verify', { challenge, attestation: make(challenge) }, owner.auth);
      expectStatus(res, 400);
      assert.match(json<{ detail: string }>(res).detail, /registration failed/);
    }
    assert.deepEqual(json<unknown[]>(await get('/api/devices', owner.auth)), []);
  });

  test('a used, expired, unknown or other-session challenge is refused', async () => {
    const owner = await signUp(t.app);
    const auth = new SoftAuthenticator();
    const { challenge } = await registerOptions(owner);
    const attestation = auth.register(challenge);
    expectStatus(await post('/api/webauthn/register/verify', { challenge, attestation }, owner.auth), 200);
    const reused = await post('/api/webauthn/register/verify', { challenge, attestation }, owner.auth);
    expectStatus(reused, 400);
    assert.match(json<{ detail: string }>(reused).detail, /challenge/);

    // Now that the owner has a passkey, more are added from a passkey session.
    const session = await passkeySession(owner, auth);
    const expired = await registerOptions(session);
    t.clock.advance(5 * 60 * 1000);
    expectStatus(await post('/api/webauthn/register/verify', { challenge: expired.challenge, attestation: new SoftAuthenticator().register(expired.challenge) }, session.auth), 400);

    expectStatus(await post('/api/webauthn/register/verify', { challenge: b64u(randomBytes(32)), attestation: new SoftAuthenticator().register('x') }, session.auth), 400);

    // Same owner, another session (a second sign-in): the challenge belongs to the first session.
    const otherAuth = (await passkeySession(owner, auth)).auth;
    const first = await registerOptions(session);
    expectStatus(await post('/api/webauthn/register/verify', { challenge: first.challenge, attestation: new SoftAuthenticator().register(first.challenge) }, otherAuth), 400);
    // Another owner altogether.
    const stranger = await signUp(t.app);
    const mine = await registerOptions(session);
    expectStatus(await post('/api/webauthn/register/verify', { challenge: mine.challenge, attestation: new SoftAuthenticator().register(mine.challenge) }, stranger.auth), 400);
  });

  test('a credential already registered is 409', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const session = await passkeySession(owner, auth);
    const { challenge } = await registerOptions(session);
    const res = await post('/api/webauthn/register/verify', { challenge, attestation: auth.register(challenge) }, session.auth);
    expectStatus(res, 409);
    const stranger = await signUp(t.app);
    const theirs = await registerOptions(stranger);
    expectStatus(await post('/api/webauthn/register/verify', { challenge: theirs.challenge, attestation: auth.register(theirs.challenge) }, stranger.auth), 409);
  });

  test('a cookie request from another origin is 403', async () => {
    const owner = await signUp(t.app);
    const { challenge } = await registerOptions(owner);
    const res = await post('/api/webauthn/register/verify', { challenge, attestation: {} }, { cookie: `session=${owner.session_token}`, origin: 'https://evil.example' });
    expectStatus(res, 403);
  });
});

describe('passkey sign-in', () => {
  test('options have the same shape for an existing and an unknown email; no allowCredentials; UV required', async () => {
    const owner = await signUp(t.app);
    await register(owner);
    const known = await loginOptions(owner.email);
    const unknown = await loginOptions(`nobody.${Date.now()}@example.com`);
    assert.deepEqual(shape(known), shape(unknown));
    assert.notEqual(known.challenge, unknown.challenge);
    assert.deepEqual(known.options, { rpId: 'localhost', challenge: known.challenge, timeout: 300000, userVerification: 'required' });
  });

  test('422 with a malformed email or body (no email at all is fine: passkey-discoverable.test.ts)', async () => {
    expectStatus(await get('/api/webauthn/login/options?email=not-an-email'), 422);
    expectStatus(await get('/api/webauthn/login/options?email='), 422);
    for (const body of [{}, { challenge: 'abc' }, { challenge: 'abc', assertion: 'x' }, { assertion: {} }]) {
      expectStatus(await post('/api/webauthn/login/verify', body), 422);
    }
  });

  test('signs in like POST /api/login: same body shape, session cookie, a working session', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const { challenge } = await loginOptions(owner.email);
    const res = await post('/api/webauthn/login/verify', { challenge, assertion: auth.assert(challenge, { userHandle: owner.user.id }) });
    expectStatus(res, 200);
    const password = await post('/api/login', { email: owner.email, password: owner.password });
    assert.deepEqual(Object.keys(json(res)).sort(), ['expires_at', 'session_token', 'user']);
    assert.deepEqual(Object.keys(json(password)).sort(), ['expires_at', 'session_token', 'user']);
    assert.deepEqual(json(res).user, json(password).user);
    const cookie = res.cookies.find((c) => c.name === 'session');
    assert.ok(cookie?.httpOnly);
    assert.equal(cookie?.sameSite, 'Lax');
    const me = await get('/api/me', { cookie: `session=${cookie?.value}` });
    expectStatus(me, 200);
    assert.equal(json(me).email, owner.email);
    const devices = json<{ last_used_at: string | null }[]>(await get('/api/devices', owner.auth));
    assert.equal(devices[0]?.last_used_at, new Date(t.clock.now()).toISOString());
  });

  test('an unknown email does not stop a valid passkey; another account\'s email does', async () => {
    const owner = await signUp(t.app);
    const other = await signUp(t.app);
    const { auth } = await register(owner);
    const unknown = await loginOptions(`nobody.${Date.now()}@example.com`);
    expectStatus(await post('/api/webauthn/login/verify', { challenge: unknown.challenge, assertion: auth.assert(unknown.challenge) }), 200);
    const wrong = await loginOptions(other.email.toUpperCase());
    const res = await post('/api/webauthn/login/verify', { challenge: wrong.challenge, assertion: auth.assert(wrong.challenge) });
    expectStatus(res, 401);
    assert.deepEqual(json(res), { detail: 'passkey sign-in failed' });
  });

  test('garbage, forged or mismatched assertions are 401 with one detail, never 5xx', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const stranger = new SoftAuthenticator();
    const bad: ((c: string) => unknown)[] = [
      () => ({}),
      () => ({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' } }),
      (c) => stranger.assert(c),
      (c) => ({ ...auth.assert(c), response: { ...auth.assert(c).response, signature: b64u(randomBytes(70)) } }),
      (c) => auth.assert(c, { origin: 'https://evil.example' }),
      (c) => auth.assert(c, { flags: UP }),
      (c) => auth.assert(c, { userHandle: 'u_someoneelse' }),
      () => auth.assert(b64u(randomBytes(32))),
      (c) => new SoftAuthenticator({ rpId: 'evil.example' }).assert(c),
    ];
    for (const make of bad) {
      const { challenge } = await loginOptions(owner.email);
      const res = await post('/api/webauthn/login/verify', { challenge, assertion: make(challenge) });
      expectStatus(res, 401);
      assert.deepEqual(json(res), { detail: 'passkey sign-in failed' });
    }
  });

  test('a used or expired challenge is refused', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const { challenge } = await loginOptions(owner.email);
    const assertion = auth.assert(challenge);
    expectStatus(await post('/api/webauthn/login/verify', { challenge, assertion }), 200);
    expectStatus(await post('/api/webauthn/login/verify', { challenge, assertion }), 401);
    const later = await loginOptions(owner.email);
    t.clock.advance(5 * 60 * 1000);
    expectStatus(await post('/api/webauthn/login/verify', { challenge: later.challenge, assertion: auth.assert(later.challenge) }), 401);
  });

  test('a sign counter that does not grow is refused', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const first = await loginOptions(owner.email);
    expectStatus(await post('/api/webauthn/login/verify', { challenge: first.challenge, assertion: auth.assert(first.challenge, { counter: 10 }) }), 200);
    for (const counter of [10, 9, 0]) {
      const { challenge } = await loginOptions(owner.email);
      expectStatus(await post('/api/webauthn/login/verify', { challenge, assertion: auth.assert(challenge, { counter }) }), 401);
    }
    const ok = await loginOptions(owner.email);
    expectStatus(await post('/api/webauthn/login/verify', { challenge: ok.challenge, assertion: auth.assert(ok.challenge, { counter: 11 }) }), 200);
  });

  test('an authenticator without a counter (always 0) may sign in repeatedly', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner, new SoftAuthenticator({ signCount: false }));
    for (let i = 0; i < 2; i++) {
      const { challenge } = await loginOptions(owner.email);
      expectStatus(await post('/api/webauthn/login/verify', { challenge, assertion: auth.assert(challenge) }), 200);
    }
  });

  test('two assertions racing from the same counter: exactly one signs in', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const a = await loginOptions(owner.email);
    const b = await loginOptions(owner.email);
    const results = await Promise.all([
      post('/api/webauthn/login/verify', { challenge: a.challenge, assertion: auth.assert(a.challenge, { counter: 5 }) }),
      post('/api/webauthn/login/verify', { challenge: b.challenge, assertion: auth.assert(b.challenge, { counter: 5 }) }),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401]);
  });

  test('a removed passkey no longer signs in', async () => {
    const owner = await signUp(t.app);
    const { auth, deviceId } = await register(owner);
    const session = await passkeySession(owner, auth);
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/devices/${deviceId}`, headers: session.auth }), 200);
    const { challenge } = await loginOptions(owner.email);
    expectStatus(await post('/api/webauthn/login/verify', { challenge, assertion: auth.assert(challenge) }), 401);
  });

  test('sign-in attempts are throttled per client address', async () => {
    const limited = await testApp();
    try {
      let last = 0;
      for (let i = 0; i < 31; i++) last = (await limited.app.inject({ method: 'GET', url: '/api/webauthn/login/options?email=a@example.com' })).statusCode;
      assert.equal(last, 429);
      const res = await limited.app.inject({ method: 'POST', url: '/api/webauthn/login/verify', payload: { challenge: 'x', assertion: {} } });
      expectStatus(res, 429);
      assert.ok(res.headers['retry-after']);
    } finally {
      await limited.close();
    }
  });
});

describe('passkey assertions for approvals', () => {
  test('options list the owner\'s passkeys; a valid assertion for that subject passes once', async () => {
    const owner = await signUp(t.app);
    const { auth, deviceId } = await register(owner);
    const second = await register(await passkeySession(owner, auth));
    const { challenge, options } = await t.services.passkeys.assertionOptions(owner.user.id, 't_abc');
    assert.equal(options.userVerification, 'required');
    assert.deepEqual(options.allowCredentials?.map((c) => c.id).sort(), [auth.id, second.auth.id].sort());
    const assertion = auth.assert(challenge, { counter: 3 });
    const used = await t.services.passkeys.verifyAssertion(owner.user.id, 't_abc', assertion);
    assert.equal(used.id, deviceId);
    assert.equal(used.counter, 3);
    await assert.rejects(t.services.passkeys.verifyAssertion(owner.user.id, 't_abc', assertion), { status: 401 });
  });

  test('refused for another subject, another owner, a login challenge, a foreign passkey or an expired challenge', async () => {
    const owner = await signUp(t.app);
    const other = await signUp(t.app);
    const { auth } = await register(owner);
    const otherKey = await register(other);
    const px = t.services.passkeys;

    const c1 = await px.assertionOptions(owner.user.id, 't_one');
    await assert.rejects(px.verifyAssertion(owner.user.id, 't_two', auth.assert(c1.challenge)), { status: 401 });
    const c2 = await px.assertionOptions(owner.user.id, 't_one');
    await assert.rejects(px.verifyAssertion(other.user.id, 't_one', auth.assert(c2.challenge)), { status: 401 });
    const login = await px.loginOptions(owner.email, remoteAddress());
    await assert.rejects(px.verifyAssertion(owner.user.id, 't_one', auth.assert(login.challenge)), { status: 401 });
    const c3 = await px.assertionOptions(owner.user.id, 't_one');
    await assert.rejects(px.verifyAssertion(owner.user.id, 't_one', otherKey.auth.assert(c3.challenge)), { status: 401 });
    const c4 = await px.assertionOptions(owner.user.id, 't_one');
    t.clock.advance(5 * 60 * 1000);
    await assert.rejects(px.verifyAssertion(owner.user.id, 't_one', auth.assert(c4.challenge)), { status: 401 });
    await assert.rejects(px.verifyAssertion(owner.user.id, 't_one', { nonsense: true }), { status: 401 });
    // A txn challenge does not sign anyone in either.
    const c5 = await px.assertionOptions(owner.user.id, 't_one');
    expectStatus(await post('/api/webauthn/login/verify', { challenge: c5.challenge, assertion: auth.assert(c5.challenge) }), 401);
  });

  test('an owner without passkeys is told to add one (409)', async () => {
    const owner = await signUp(t.app);
    await assert.rejects(t.services.passkeys.assertionOptions(owner.user.id, 't_abc'), { status: 409 });
  });
});

describe('devices', () => {
  test('list and remove; another owner\'s device or a bad id is 404', async () => {
    const signedUp = await signUp(t.app);
    const other = await signUp(t.app);
    const { auth, deviceId } = await register(signedUp);
    const owner = await passkeySession(signedUp, auth);
    const del = (id: string, who: Owner) => t.app.inject({ method: 'DELETE', url: `/api/devices/${id}`, headers: who.auth });
    expectStatus(await del(deviceId, other), 404);
    expectStatus(await del('dev_nonexistent', owner), 404);
    expectStatus(await del('u_wrongprefix', owner), 404);
    assert.equal(json<unknown[]>(await get('/api/devices', owner.auth)).length, 1);
    const res = await del(deviceId, owner);
    expectStatus(res, 200);
    assert.deepEqual(json(res), { ok: true });
    assert.deepEqual(json<unknown[]>(await get('/api/devices', owner.auth)), []);
    expectStatus(await del(deviceId, owner), 404);
  });
});

describe('who may add or remove passkeys', () => {
  const PASSKEY_SESSION_REQUIRED = 'sign in with one of your passkeys to add or remove passkeys';
  const del = (id: string, who: Owner) => t.app.inject({ method: 'DELETE', url: `/api/devices/${id}`, headers: who.auth, remoteAddress: remoteAddress() });
  const deviceIds = async (who: Owner) => json<{ id: string }[]>(await get('/api/devices', who.auth)).map((d) => d.id).sort();
  const expectPasskeySessionRequired = (res: Awaited<ReturnType<typeof get>>) => {
    expectStatus(res, 403);
    const body = json<{ detail: string; next_step: string }>(res);
    assert.equal(body.detail, PASSKEY_SESSION_REQUIRED);
    assert.match(body.next_step, /\/api\/webauthn\/login\/verify/);
  };

  test('sessions remember how they were made', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const login = await post('/api/login', { email: owner.email, password: owner.password });
    expectStatus(login, 200);
    const session = (token: string) => t.services.accounts.session(token);
    assert.equal((await session(owner.session_token))?.method, 'password');
    assert.equal((await session(json<{ session_token: string }>(login).session_token))?.method, 'password');
    const byPasskey = await passkeySession(owner, auth);
    assert.equal((await session(byPasskey.auth.authorization.slice(7)))?.method, 'passkey');
  });

  test('the first passkey: any session may register it', async () => {
    const owner = await signUp(t.app);
    const { deviceId } = await register(owner);
    assert.deepEqual(await deviceIds(owner), [deviceId]);
  });

  test('a second passkey with a password session is 403 (options and verify); nothing is added', async () => {
    const owner = await signUp(t.app);
    // Options fetched while the owner had no passkey yet are refused at verification once they have one.
    const early = await registerOptions(owner);
    const { deviceId } = await register(owner);
    expectPasskeySessionRequired(await post('/api/webauthn/register/verify', { challenge: early.challenge, attestation: new SoftAuthenticator().register(early.challenge) }, owner.auth));
    expectPasskeySessionRequired(await get('/api/webauthn/register/options', owner.auth));
    // A fresh password sign-in is no better than the sign-up session.
    const login = await post('/api/login', { email: owner.email, password: owner.password });
    expectStatus(login, 200);
    const relogged = { ...owner, auth: { authorization: `Bearer ${json<{ session_token: string }>(login).session_token}` } };
    expectPasskeySessionRequired(await get('/api/webauthn/register/options', relogged.auth));
    // The same through the browser's cookie.
    expectPasskeySessionRequired(await get('/api/webauthn/register/options', { cookie: `session=${owner.session_token}` }));
    assert.deepEqual(await deviceIds(owner), [deviceId]);
  });

  test('a second passkey with a passkey session is registered', async () => {
    const owner = await signUp(t.app);
    const first = await register(owner);
    const session = await passkeySession(owner, first.auth);
    const second = await register(session);
    assert.deepEqual(await deviceIds(owner), [first.deviceId, second.deviceId].sort());
    // The new passkey signs in too, and its session may manage passkeys as well.
    const third = await register(await passkeySession(owner, second.auth));
    assert.equal((await deviceIds(owner)).length, 3);
    assert.ok((await deviceIds(owner)).includes(third.deviceId));
  });

  test('a passkey session by cookie (the owner page) may add a passkey', async () => {
    const owner = await signUp(t.app);
    const { auth } = await register(owner);
    const { challenge } = await loginOptions(owner.email);
    const signedIn = await post('/api/webauthn/login/verify', { challenge, assertion: auth.assert(challenge) });
    expectStatus(signedIn, 200);
    const cookie = signedIn.cookies.find((c) => c.name === 'session')?.value;
    assert.ok(cookie);
    expectStatus(await get('/api/webauthn/register/options', { cookie: `session=${cookie}` }), 200);
  });

  test('removing a passkey: 403 with a password session, 200 with a passkey session', async () => {
    const owner = await signUp(t.app);
    const first = await register(owner);
    const session = await passkeySession(owner, first.auth);
    const second = await register(session);
    expectPasskeySessionRequired(await del(second.deviceId, owner));
    // Not even an unknown id tells a password session anything.
    expectPasskeySessionRequired(await del('dev_nonexistent', owner));
    assert.deepEqual(await deviceIds(owner), [first.deviceId, second.deviceId].sort());
    expectStatus(await del(second.deviceId, session), 200);
    assert.deepEqual(await deviceIds(owner), [first.deviceId]);
  });

  test('with every passkey removed, a password session may register a first one again', async () => {
    const owner = await signUp(t.app);
    const { auth, deviceId } = await register(owner);
    expectStatus(await del(deviceId, await passkeySession(owner, auth)), 200);
    const again = await register(owner);
    assert.deepEqual(await deviceIds(owner), [again.deviceId]);
  });
});

describe('owner page', () => {
  test('/app and its script are served with the CSP and no inline script; the script bundles the passkey library', async () => {
    const page = await get('/app');
    expectStatus(page, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/);
    for (const [url, type] of [['/assets/app/app.js', /^text\/javascript/], ['/assets/app/app.css', /^text\/css/]] as const) {
      const res = await get(url);
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), type);
    }
    assert.match((await get('/assets/app/app.js')).body, /navigator\.credentials/);
  });
});
