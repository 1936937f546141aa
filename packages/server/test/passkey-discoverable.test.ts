import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';

// Passkey sign-in without an email (discoverable credentials: the browser lists the passkeys it holds
// for this site, as a button's prompt or as autofill), on both stores. The options name no user and
// list no credentials; verification finds the passkey by its credential id and the account by the
// passkey; the challenge stays single-use, consumed atomically. The email path is tested in
// passkeys.test.ts and checked here to still work beside it.

type Owner = Awaited<ReturnType<typeof signUp>>;
interface Options { challenge: string; options: Record<string, unknown> }

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`passkey sign-in without an email (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(async () => {
      await t?.close();
    });

    // Each request from its own client address: the per-address sign-in throttle is tested elsewhere.
    const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers, remoteAddress: remoteAddress() });
    const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url, payload: payload as object, headers, remoteAddress: remoteAddress() });

    async function register(owner: Owner | { auth: Record<string, string> }, auth = new SoftAuthenticator()): Promise<SoftAuthenticator> {
      const res = await get('/api/webauthn/register/options', owner.auth);
      expectStatus(res, 200);
      const { challenge, options } = json<Options>(res);
      expectStatus(await post('/api/webauthn/register/verify', { challenge, attestation: auth.register(options as { challenge: string }) }, owner.auth), 200);
      return auth;
    }

    async function options(query = ''): Promise<Options> {
      const res = await get(`/api/webauthn/login/options${query}`);
      expectStatus(res, 200);
      return json<Options>(res);
    }

    const verify = (challenge: string, assertion: unknown) => post('/api/webauthn/login/verify', { challenge, assertion });

    test('options without an email: a fresh challenge, no allowCredentials, the same shape as with an email', async () => {
      const bare = await options();
      const withEmail = await options(`?email=${encodeURIComponent('someone@example.com')}`);
      assert.match(bare.challenge, /^[A-Za-z0-9_-]{43}$/);
      assert.notEqual(bare.challenge, withEmail.challenge);
      assert.deepEqual(bare.options, { rpId: 'localhost', challenge: bare.challenge, timeout: 300000, userVerification: 'required' });
      assert.deepEqual(Object.keys(bare.options).sort(), Object.keys(withEmail.options).sort());
      assert.equal('allowCredentials' in bare.options, false, 'the browser offers every passkey it holds for this site');
    });

    test('signs in the account the passkey belongs to, with a session that may manage passkeys', async () => {
      const alice = await signUp(t.app);
      const bob = await signUp(t.app);
      const aliceKey = await register(alice);
      const bobKey = await register(bob);
      for (const [owner, key] of [[alice, aliceKey], [bob, bobKey]] as const) {
        const { challenge, options: opts } = await options();
        const res = await verify(challenge, key.assert(opts as { challenge: string }));
        expectStatus(res, 200);
        const body = json<{ user: { id: string; email: string }; session_token: string }>(res);
        assert.equal(body.user.id, owner.user.id);
        assert.equal(body.user.email, owner.email);
        assert.ok(res.cookies.some((c) => c.name === 'session' && c.httpOnly), 'session cookie');
        // A passkey session: it may add a second passkey (a password session may not).
        const session = { authorization: `Bearer ${body.session_token}` };
        assert.equal(json<{ session_method: string }>(await get('/api/me', session)).session_method, 'passkey');
        expectStatus(await get('/api/webauthn/register/options', owner.auth), 403);
        await register({ auth: session }, new SoftAuthenticator());
      }
    });

    test('the challenge is single-use: answered once, it signs in no one again', async () => {
      const owner = await signUp(t.app);
      const key = await register(owner);
      const { challenge } = await options();
      const assertion = key.assert(challenge);
      expectStatus(await verify(challenge, assertion), 200);
      expectStatus(await verify(challenge, assertion), 401);
      expectStatus(await verify(challenge, key.assert(challenge)), 401);
    });

    test('many answers racing for one challenge: exactly one signs in', async () => {
      const owner = await signUp(t.app);
      const key = await register(owner);
      const { challenge } = await options();
      // Growing counters, so each answer alone would be good: only the challenge decides.
      const answers = [1, 2, 3, 4, 5, 6].map((counter) => key.assert(challenge, { counter }));
      const results = await Promise.all(answers.map((a) => verify(challenge, a)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401, 401, 401, 401]);
    });

    test('refused with one answer: an unknown passkey (which still uses up the challenge), a user handle of another account, a challenge of another ceremony', async () => {
      const owner = await signUp(t.app);
      const other = await signUp(t.app);
      const key = await register(owner);

      const first = await options();
      const res = await verify(first.challenge, new SoftAuthenticator().assert(first.challenge));
      expectStatus(res, 401);
      assert.deepEqual(json(res), { detail: 'passkey sign-in failed' });
      expectStatus(await verify(first.challenge, key.assert(first.challenge)), 401);

      const second = await options();
      expectStatus(await verify(second.challenge, key.assert(second.challenge, { userHandle: other.user.id })), 401);

      // A registration challenge, signed as a sign-in: not a sign-in challenge.
      const reg = json<Options>(await get('/api/webauthn/register/options', other.auth));
      expectStatus(await verify(reg.challenge, key.assert(reg.challenge)), 401);

      const good = await options();
      expectStatus(await verify(good.challenge, key.assert(good.challenge)), 200);
    });

    test('the email path still works beside it: the typed email\'s own passkey signs in, another account\'s is refused', async () => {
      const owner = await signUp(t.app);
      const other = await signUp(t.app);
      const key = await register(owner);
      const own = await options(`?email=${encodeURIComponent(owner.email)}`);
      expectStatus(await verify(own.challenge, key.assert(own.challenge)), 200);
      const wrong = await options(`?email=${encodeURIComponent(other.email)}`);
      expectStatus(await verify(wrong.challenge, key.assert(wrong.challenge)), 401);
      expectStatus(await get('/api/webauthn/login/options?email=not-an-email'), 422);
    });
  });
}
