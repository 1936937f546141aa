import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { FixedClock } from '../src/clock.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { accessRequest, addPasskey, assertionOptions, grantAccess, ownerWithPasskey, postAccessRequest, respond, withPasskeySession, type Owner } from './helpers/approvals.ts';
import { getPass } from './helpers/passes.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import { startTwilioStandIn, type TwilioStandIn } from './helpers/stand-ins/twilio.ts';
import { RECOVERY_COMPLETE_LIMIT, RECOVERY_FAILED, RECOVERY_START_LIMIT } from '../src/domain/recovery/recovery.ts';
import { deliver, landing, startFlow, walkIssuer } from './helpers/identity-flow.ts';
import { startIdentityProviderStandIn, type IdentityProviderStandIn } from './helpers/stand-ins/identity-provider.ts';

// Phone, SMS and recovery (decisions §14; issue 23 items 1-3), in process on both stores, with the
// SMS going through the outbox to a Twilio stand-in that checks every request.

const MIN = 60_000;
type Auth = { auth: Record<string, string> };

function suite(backend: 'sqlite' | 'postgres'): void {
  describe(`phone and recovery (${backend})`, () => {
    let t: TestApp;
    let twilio: TwilioStandIn;
    let google: IdentityProviderStandIn;
    let n = 0;
    // A fresh valid US number per test (555-01xx numbers are fictional but valid).
    const newNumber = () => `+1 201 555 ${String(100 + (n++ % 900)).padStart(4, '0')}`;
    const e164 = (pretty: string) => pretty.replace(/\s/g, '');

    before(async () => {
      twilio = await startTwilioStandIn();
      // A linked identity provider is a way in that a recovery must close (a real OpenID Provider on loopback).
      google = await startIdentityProviderStandIn({ redirectUris: ['http://localhost:8080/api/oauth/google/callback'] });
      t = await testApp({ backend, env: { OUTBOX_POLL_MS: '600000', ...twilio.env, OUTBOUND_ALLOW_LOOPBACK: 'true', OAUTH_PROVIDERS: 'google', ...google.env('google') }, clock: new FixedClock(Date.now()) });
    });
    after(async () => {
      await t.close();
      await twilio.close();
      await google.stop();
    });

    const post = (url: string, owner: Auth | null, payload: unknown) => t.app.inject({ method: 'POST', url, headers: owner?.auth ?? {}, remoteAddress: remoteAddress(), payload: payload as Record<string, unknown> });
    const me = async (owner: Auth) => json<{ phone: string | null; phone_verified: boolean; session_method: string }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
    const sendCode = async (owner: Auth, phone: string) => {
      const res = await post('/api/phone/send', owner, { phone });
      expectStatus(res, 200);
      await t.services.outbox.drain();
      const code = twilio.lastCode(e164(phone));
      assert.ok(code, 'the stand-in got the code');
      return code;
    };
    const verifyPhone = async (owner: Auth, phone: string) => {
      const code = await sendCode(owner, phone);
      const res = await post('/api/phone/verify', owner, { phone, code });
      expectStatus(res, 200);
      return res;
    };
    const actions = async (owner: Auth) => json<{ items?: { action: string; detail: Record<string, unknown> }[]; activity?: { action: string; detail: Record<string, unknown> }[] }>(await t.app.inject({ url: '/api/activity', headers: owner.auth }));
    const activityOf = async (owner: Auth, action: string) => {
      const body = await actions(owner);
      return (body.items ?? body.activity ?? []).filter((a) => a.action === action);
    };
    const inbox = async (owner: Auth) => {
      const body = json<{ items?: { title: string; body: string }[]; notifications?: { title: string; body: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
      return body.items ?? body.notifications ?? [];
    };
    const actionNames = async (owner: Auth) => {
      const body = await actions(owner);
      return (body.items ?? body.activity ?? (body as unknown as { action: string }[])).map((a) => a.action);
    };
    const inboxTitles = async (owner: Auth) => {
      const body = json<{ items?: { title: string }[]; notifications?: { title: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
      return (body.items ?? body.notifications ?? []).map((x) => x.title);
    };

    it('send normalises to E.164 and texts a 6-digit code through Twilio; bad numbers get 400 with detail, wrong types 422', async () => {
      const owner = await signUp(t.app);
      const phone = '+1 (201) 555-0100';
      const res = await post('/api/phone/send', owner, { phone });
      expectStatus(res, 200);
      assert.deepEqual(json(res), { sent: true, phone: '+1 ••• ••• 0100', expires_in: 600 });
      await t.services.outbox.drain();
      const msg = twilio.messages.at(-1);
      assert.equal(msg?.to, '+12015550100');
      assert.equal(msg?.from, twilio.from);
      assert.match(msg?.body ?? '', /\b\d{6}\b/);
      assert.deepEqual(twilio.rejections, []);
      // 00 for +, dots and dashes are fine
      expectStatus(await post('/api/phone/send', owner, { phone: '0044 20 7946 0958' }), 200);
      for (const bad of ['12345', '+999', 'call me', '2015550100', '+1 201 555 01000000']) {
        const r = await post('/api/phone/send', owner, { phone: bad });
        expectStatus(r, 400);
        assert.match(json<{ detail: string }>(r).detail, /full international number/);
      }
      expectStatus(await post('/api/phone/send', owner, { phone: 12015550100 }), 422);
      expectStatus(await post('/api/phone/send', owner, {}), 422);
      expectStatus(await post('/api/phone/send', null, { phone }), 401);
    });

    it('verify: the right code verifies once; /api/me shows the number masked; activity and inbox record it; 409 for the same number again', async () => {
      const owner = await signUp(t.app);
      assert.deepEqual(await me(owner).then((m) => [m.phone, m.phone_verified]), [null, false]);
      const phone = '+1 201 555 0123';
      const code = await sendCode(owner, phone);
      const ok = await post('/api/phone/verify', owner, { phone: '+12015550123', code });
      expectStatus(ok, 200);
      assert.deepEqual(json(ok), { phone_verified: true, phone: '+1 ••• ••• 0123' });
      const m = await me(owner);
      assert.equal(m.phone, '+1 ••• ••• 0123');
      assert.equal(m.phone_verified, true);
      // used once
      expectStatus(await post('/api/phone/verify', owner, { phone, code }), 400);
      expectStatus(await post('/api/phone/send', owner, { phone }), 409);
      const names = await actionNames(owner);
      assert.ok(names.includes('phone.code_sent') && names.includes('phone.verified'), names.join(','));
      assert.ok((await inboxTitles(owner)).includes('Phone number verified'));
      // Only the hash is stored.
      const live = await t.services.store.phoneCodes.live(owner.user.id, 'verify_phone', t.clock.now());
      assert.equal(live, undefined);
    });

    it('5 tries, then the code is void even when right; a code for another number does not count', async () => {
      const owner = await signUp(t.app);
      const phone = newNumber();
      const code = await sendCode(owner, phone);
      const wrong = code === '000000' ? '111111' : '000000';
      expectStatus(await post('/api/phone/verify', owner, { phone: newNumber(), code }), 400);
      for (let i = 4; i >= 0; i--) {
        const r = await post('/api/phone/verify', owner, { phone, code: wrong });
        expectStatus(r, 400);
        assert.match(json<{ detail: string }>(r).detail, i > 0 ? new RegExp(`${i} tr(y|ies) left`) : /last try/);
      }
      const late = await post('/api/phone/verify', owner, { phone, code });
      expectStatus(late, 400);
      assert.match(json<{ detail: string }>(late).detail, /no code is waiting/);
      assert.equal((await me(owner)).phone_verified, false);
    });

    it('racing tries never exceed 5 and racing right answers verify once', async () => {
      const owner = await signUp(t.app);
      const phone = newNumber();
      const code = await sendCode(owner, phone);
      const answers = await Promise.all(Array.from({ length: 8 }, () => post('/api/phone/verify', owner, { phone, code })));
      assert.equal(answers.filter((a) => a.statusCode === 200).length, 1);
    });

    it('a code expires after 10 minutes', async () => {
      const owner = await signUp(t.app);
      const phone = newNumber();
      const code = await sendCode(owner, phone);
      t.clock.advance(10 * MIN);
      const r = await post('/api/phone/verify', owner, { phone, code });
      expectStatus(r, 400);
      assert.match(json<{ detail: string }>(r).detail, /expired/);
    });

    it('5 sends per hour per account, then 429 with retry_after; the next hour sends again', async () => {
      const owner = await signUp(t.app);
      t.clock.set(Math.ceil(t.clock.now() / 3_600_000) * 3_600_000 + 1000);
      for (let i = 0; i < 5; i++) expectStatus(await post('/api/phone/send', owner, { phone: newNumber() }), 200);
      const refused = await post('/api/phone/send', owner, { phone: newNumber() });
      expectStatus(refused, 429);
      assert.ok(json<{ retry_after: number }>(refused).retry_after > 0);
      t.clock.advance(60 * MIN);
      expectStatus(await post('/api/phone/send', owner, { phone: newNumber() }), 200);
    });

    it('user:phone is offered and granted only while verified, and gone from the next pass after unlinking', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner, 'Caller');
      const fields = async () => json<{ fields: { name: string }[] }>(await t.app.inject({ url: '/api/user-info/fields', headers: owner.auth })).fields.map((f) => f.name);
      assert.equal((await fields()).includes('user:phone'), false);
      const asked = await postAccessRequest(t, agent, { user_info: ['user:phone'] });
      expectStatus(asked, 400);
      assert.match(json<{ detail: string }>(asked).detail, /unknown user_info field: "user:phone"/);
      const phone = newNumber();
      await verifyPhone(owner, phone);
      assert.ok((await fields()).includes('user:phone'));
      await grantAccess(t, owner, agent, { user_info: ['user:phone'] });
      const pass = decodeJwt((await getPass(t, agent)).access_token);
      assert.deepEqual(pass.user_info, { 'user:phone': e164(phone) });

      const unlinked = await t.app.inject({ method: 'DELETE', url: '/api/phone', headers: owner.auth });
      expectStatus(unlinked, 200);
      assert.deepEqual(json(unlinked), { phone: null, phone_verified: false });
      assert.deepEqual(await me(owner).then((m) => [m.phone, m.phone_verified]), [null, false]);
      const next = decodeJwt((await getPass(t, agent)).access_token);
      assert.deepEqual(next.user_info, {}, 'the next pass carries no phone');
      assert.equal((await fields()).includes('user:phone'), false);
      expectStatus(await postAccessRequest(t, agent, { site: 'other.example', user_info: ['user:phone'] }), 400);
      assert.ok((await actionNames(owner)).includes('phone.removed'));
      assert.ok((await inboxTitles(owner)).includes('Phone number removed'));
      // Unlinking again answers the same.
      expectStatus(await t.app.inject({ method: 'DELETE', url: '/api/phone', headers: owner.auth }), 200);
    });

    // --- recovery ---

    const codesOf = async (owner: Auth) => {
      const res = await post('/api/recovery/codes', owner, {});
      expectStatus(res, 200);
      return json<{ codes: string[] }>(res).codes;
    };
    /** An owner with a passkey, a verified phone and recovery codes. */
    const prepared = async () => {
      const owner = await withPasskeySession(t, await ownerWithPasskey(t));
      const phone = newNumber();
      await verifyPhone(owner, phone);
      const codes = await codesOf(owner);
      return { owner, phone, codes };
    };
    const start = (email: string, phone: string) => post('/api/recovery/start', null, { email, phone });
    const smsCodeFor = async (phone: string) => {
      await t.services.outbox.drain();
      const code = twilio.lastCode(e164(phone));
      assert.ok(code);
      return code;
    };
    const complete = (body: Record<string, unknown>) => post('/api/recovery/complete', null, body);

    it('recovery codes: 10 of 12+ base32 characters, shown once; a passkey session is needed once a passkey exists; regenerating voids the old set', async () => {
      const fresh = await signUp(t.app);
      const early = await codesOf(fresh);
      assert.equal(early.length, 10);
      for (const c of early) assert.match(c.replace(/-/g, ''), /^[A-Z2-7]{12,}$/);
      assert.equal(new Set(early).size, 10);

      const owner = await ownerWithPasskey(t);
      const refused = await post('/api/recovery/codes', owner, {});
      expectStatus(refused, 403);
      assert.ok(json<{ next_step: string }>(refused).next_step);
      const { owner: ready, phone, codes } = await prepared();
      assert.ok((await actionNames(ready)).includes('recovery.codes_generated'));
      assert.ok((await inboxTitles(ready)).includes('New recovery codes'));
      const newer = await codesOf(ready);
      // An old code no longer works.
      expectStatus(await start(ready.email, phone), 200);
      const sms = await smsCodeFor(phone);
      const old = await complete({ email: ready.email, sms_code: sms, recovery_code: codes[0], new_password: 'a brand new password' });
      expectStatus(old, 401);
      expectStatus(await complete({ email: ready.email, sms_code: sms, recovery_code: newer[0]?.toLowerCase().replace(/-/g, ' '), new_password: 'a brand new password' }), 200);
    });

    it('start answers the same, in about the same time, whether or not the account and phone matched; an SMS goes out only on a match', async () => {
      const { owner, phone } = await prepared();
      const sentBefore = twilio.messages.length;
      const timed = async (email: string, p: string) => {
        const began = performance.now();
        const r = await start(email, p);
        return { status: r.statusCode, body: r.body, ms: performance.now() - began };
      };
      const cases = [
        await timed(owner.email, phone),
        await timed(`nobody-${n++}@example.com`, phone),
        await timed(owner.email, newNumber()),
        await timed(owner.email.toUpperCase(), phone.replace(/ /g, '-')),
      ];
      for (const c of cases) {
        assert.equal(c.status, 200);
        assert.equal(c.body, '{"sent":true}');
        assert.ok(c.ms >= 290, `every answer waits the common floor (${c.ms} ms)`);
      }
      const times = cases.map((c) => c.ms);
      assert.ok(Math.max(...times) / Math.min(...times) < 3, `similar times: ${times.join(', ')}`);
      await t.services.outbox.drain();
      assert.equal(twilio.messages.length - sentBefore, 2, 'only the two matching starts texted a code');
      assert.ok((await actionNames(owner)).includes('recovery.started'));
      // Each matching start leaves a security notice, with the number masked and never the code.
      const started = (await inbox(owner)).filter((x) => x.title === 'Account recovery started');
      assert.equal(started.length, 2, 'one notice per matching start');
      const masked = `+1 ••• ••• ${e164(phone).slice(-4)}`;
      for (const x of started) {
        assert.ok(x.body.includes(masked), x.body);
        assert.equal(x.body.includes(e164(phone)), false, 'the full number stays out');
      }
      const texted = twilio.messages.slice(sentBefore).map((m) => /\b(\d{6})\b/.exec(m.body)?.[1] ?? '');
      for (const code of texted) assert.equal(JSON.stringify(await inbox(owner)).includes(code), false, 'no code in the inbox');
      // an unverified phone never matches
      const other = await signUp(t.app);
      const unverified = newNumber();
      expectStatus(await post('/api/phone/send', other, { phone: unverified }), 200);
      await t.services.outbox.drain();
      const count = twilio.messages.length;
      expectStatus(await start(other.email, unverified), 200);
      await t.services.outbox.drain();
      assert.equal(twilio.messages.length, count);
      // a number that is not one: 400 for everyone
      expectStatus(await start(owner.email, '12'), 400);
    });

    it('complete: one generic 401 for any wrong part; 5 tries per start, then void; success removes every other session and passkey and sets the password', async () => {
      const { owner, phone, codes } = await prepared();
      const passwordSession = json<{ session_token: string }>(await post('/api/login', null, { email: owner.email, password: owner.password })).session_token;
      expectStatus(await start(owner.email, phone), 200);
      const sms = await smsCodeFor(phone);
      const wrongSms = sms === '000000' ? '111111' : '000000';
      const details = new Set<string>();
      const tries = [
        { sms_code: wrongSms, recovery_code: codes[0] },
        { sms_code: sms, recovery_code: 'AAAA-BBBB-CCCC' },
        { sms_code: wrongSms, recovery_code: 'nope' },
      ];
      for (const wrong of tries) {
        const r = await complete({ email: owner.email, new_password: 'a brand new password', ...wrong });
        expectStatus(r, 401);
        details.add(json<{ detail: string }>(r).detail);
      }
      assert.deepEqual([...details], [RECOVERY_FAILED]);
      // Each wrong try is in Activity with the tries left, and nothing that was typed.
      const failures = await activityOf(owner, 'recovery.failed');
      assert.deepEqual(failures.map((f) => f.detail), [{ attempts_left: 2 }, { attempts_left: 3 }, { attempts_left: 4 }], 'newest first');
      const trail = JSON.stringify(await actions(owner));
      for (const secret of [sms, wrongSms, codes[0] ?? '', (codes[0] ?? '').replace(/-/g, ''), 'AAAA-BBBB-CCCC', 'a brand new password']) assert.equal(trail.includes(secret), false, `${secret.slice(0, 4)}... stays out of Activity`);
      // tries 4 and 5 wrong: the start is void, even the right answers fail now
      for (let i = 0; i < 2; i++) expectStatus(await complete({ email: owner.email, sms_code: wrongSms, recovery_code: codes[0], new_password: 'a brand new password' }), 401);
      const late = await complete({ email: owner.email, sms_code: sms, recovery_code: codes[0], new_password: 'a brand new password' });
      expectStatus(late, 401);
      assert.equal(json<{ detail: string }>(late).detail, RECOVERY_FAILED);
      assert.ok((await actionNames(owner)).includes('recovery.attempts_exhausted'));
      assert.equal((await activityOf(owner, 'recovery.failed')).length, 5, 'all five wrong tries recorded; the one after the start was void took no try');
      assert.ok((await inboxTitles(owner)).includes('Account recovery blocked'));
      // unknown email: the same answer
      const unknown = await complete({ email: `nobody-${n++}@example.com`, sms_code: sms, recovery_code: codes[0], new_password: 'a brand new password' });
      expectStatus(unknown, 401);
      assert.equal(json<{ detail: string }>(unknown).detail, RECOVERY_FAILED);

      // A new start; the right answers recover. The recovery code (not used by the failures) still works.
      expectStatus(await start(owner.email, phone), 200);
      const sms2 = await smsCodeFor(phone);
      const done = await complete({ email: owner.email, sms_code: sms2, recovery_code: codes[0], new_password: 'a brand new password' });
      expectStatus(done, 200);
      const recovered = { auth: { authorization: `Bearer ${json<{ session_token: string }>(done).session_token}` } };
      assert.match(String(done.headers['set-cookie']), /session=/);
      assert.equal((await me(recovered)).session_method, 'recovery');
      // every other session is gone
      expectStatus(await t.app.inject({ url: '/api/me', headers: owner.auth }), 401);
      expectStatus(await t.app.inject({ url: '/api/me', headers: { authorization: `Bearer ${passwordSession}` } }), 401);
      // every passkey is gone
      const devices = json<{ passkeys?: unknown[] }>(await t.app.inject({ url: '/api/devices', headers: recovered.auth }));
      assert.equal((await t.services.store.passkeys.listForUser(owner.user.id)).length, 0, JSON.stringify(devices).slice(0, 200));
      // the password is the new one
      expectStatus(await post('/api/login', null, { email: owner.email, password: owner.password }), 401);
      expectStatus(await post('/api/login', null, { email: owner.email, password: 'a brand new password' }), 200);
      assert.ok((await actionNames(recovered)).includes('recovery.completed'));
      assert.ok((await inboxTitles(recovered)).includes('Account recovered'));
      // the recovery code worked once
      expectStatus(await start(owner.email, phone), 200);
      const sms3 = await smsCodeFor(phone);
      expectStatus(await complete({ email: owner.email, sms_code: sms3, recovery_code: codes[0], new_password: 'another new password' }), 401);
      // and the SMS code of a completed start is used up too
      expectStatus(await complete({ email: owner.email, sms_code: sms2, recovery_code: codes[1], new_password: 'another new password' }), 401);
    });

    it('racing completions with the right answers: exactly one recovers; the recovery code is used once', async () => {
      const { owner, phone, codes } = await prepared();
      expectStatus(await start(owner.email, phone), 200);
      const sms = await smsCodeFor(phone);
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => complete({ email: owner.email, sms_code: sms, recovery_code: codes[5], new_password: `a brand new password ${i}` })));
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 401, 401, 401]);
      assert.equal(await t.services.store.recoveryCodes.countUnused(owner.user.id), 9);
    });

    it('recovery unlinks every identity provider: it no longer signs in or approves, and flows begun before cannot finish', async () => {
      const { owner, phone, codes } = await prepared();
      const who = `recovered-${n++}-${Date.now()}`;
      google.signInAs({ sub: who });
      const link = await startFlow(t, 'google', owner.auth);
      assert.equal(landing(await deliver(t, link.callback, link, owner.auth)).oauth, 'linked');
      const agent = await createAgent(t, owner as Owner, 'Asks');
      const txn = await accessRequest(t, agent);
      const approveStart = (auth: Record<string, string>) => t.app.inject({ method: 'POST', url: `/api/txn/${txn}/oauth/google`, headers: { ...auth, 'content-type': 'application/json' }, payload: 'null', remoteAddress: remoteAddress() });
      // Begun before the recovery, walked to the issuer's answer: a sign-in, and an approval.
      const signInBefore = await startFlow(t, 'google');
      const approvalBefore = await approveStart(owner.auth);
      expectStatus(approvalBefore, 200);
      const approvalCallback = await walkIssuer(json<{ redirect: string }>(approvalBefore).redirect, t.config.baseUrl);

      expectStatus(await start(owner.email, phone), 200);
      const done = await complete({ email: owner.email, sms_code: await smsCodeFor(phone), recovery_code: codes[2], new_password: 'a brand new password' });
      expectStatus(done, 200);
      const recovered = { auth: { authorization: `Bearer ${json<{ session_token: string }>(done).session_token}` } };

      // The flows begun before end with it: the owner's own (an approval) are deleted; a sign-in
      // (no owner until its callback) finds the identity linked to no one.
      const lateSignIn = landing(await deliver(t, signInBefore.callback, signInBefore));
      assert.deepEqual([lateSignIn.oauth, lateSignIn.reason], ['refused', 'not_linked']);
      const lateApproval = landing(await t.app.inject({ url: `${approvalCallback.pathname}${approvalCallback.search}` }));
      assert.deepEqual([lateApproval.oauth, lateApproval.reason], ['refused', 'bad_state']);
      // The identity signs in to nothing now, and approves nothing.
      google.signInAs({ sub: who });
      const signIn = await startFlow(t, 'google');
      assert.equal(landing(await deliver(t, signIn.callback, signIn)).reason, 'not_linked');
      const approve = await approveStart(recovered.auth);
      expectStatus(approve, 409);
      assert.match(json<{ detail: string }>(approve).detail, /no Google account is linked/);
      assert.equal((await t.services.store.authzRequests.byId(txn))?.status, 'pending', 'nothing was approved');
      assert.deepEqual(await t.services.store.oauthIdentities.listForUser(owner.user.id), []);
      const listed = json<{ name: string; linked: boolean }[]>(await t.app.inject({ url: '/api/oauth/providers', headers: recovered.auth }));
      assert.deepEqual(listed.map((p) => [p.name, p.linked]), [['google', false]]);
      // Said in Activity and in the security notice.
      const [completed] = await activityOf(recovered, 'recovery.completed');
      assert.deepEqual(completed?.detail.identity_providers_unlinked, ['google']);
      const notice = (await inbox(recovered)).find((x) => x.title === 'Account recovered');
      assert.match(notice?.body ?? '', /Google was unlinked/);
    });

    describe('limits reached: 429 with Retry-After', () => {
      /** Puts the clock 1 s into a fresh window of `windowSec` (windows start at multiples of their length). */
      const freshWindow = (windowSec: number) => t.clock.set(Math.ceil(t.clock.now() / (windowSec * 1000)) * windowSec * 1000 + 1000);
      const startFrom = (address: string, email: string, phone: string) => t.app.inject({ method: 'POST', url: '/api/recovery/start', remoteAddress: address, payload: { email, phone } });
      const refusedFor = (res: Awaited<ReturnType<typeof startFrom>>, windowSec: number) => {
        expectStatus(res, 429);
        assert.equal(res.headers['retry-after'], String(windowSec - 1));
        assert.equal(json<{ retry_after: number }>(res).retry_after, windowSec - 1);
      };

      it(`recovery start: ${RECOVERY_START_LIMIT.perAddress} per client address per hour`, async () => {
        freshWindow(RECOVERY_START_LIMIT.windowSec);
        const address = `192.0.2.${10 + (n % 200)}`;
        for (let i = 0; i < RECOVERY_START_LIMIT.perAddress; i++) expectStatus(await startFrom(address, `nobody-${n++}@example.com`, newNumber()), 200);
        refusedFor(await startFrom(address, `nobody-${n++}@example.com`, newNumber()), RECOVERY_START_LIMIT.windowSec);
        expectStatus(await startFrom(remoteAddress(), `nobody-${n++}@example.com`, newNumber()), 200);
        t.clock.advance(RECOVERY_START_LIMIT.windowSec * 1000);
        expectStatus(await startFrom(address, `nobody-${n++}@example.com`, newNumber()), 200);
      });

      it(`recovery start: ${RECOVERY_START_LIMIT.perAccount} per email address and per phone number per hour, from any address`, async () => {
        freshWindow(RECOVERY_START_LIMIT.windowSec);
        const { owner, phone } = await prepared();
        const sentBefore = twilio.messages.length;
        for (let i = 0; i < RECOVERY_START_LIMIT.perAccount; i++) expectStatus(await startFrom(remoteAddress(), owner.email, i === 0 ? phone : newNumber()), 200);
        refusedFor(await startFrom(remoteAddress(), owner.email.toUpperCase(), phone), RECOVERY_START_LIMIT.windowSec);
        await t.services.outbox.drain();
        assert.equal(twilio.messages.length - sentBefore, 1, 'the refused start texted nothing');
        // The phone number: 1 start above, then other emails (any spelling of the number counts the same).
        for (let i = 1; i < RECOVERY_START_LIMIT.perAccount; i++) expectStatus(await startFrom(remoteAddress(), `nobody-${n++}@example.com`, i % 2 ? phone : phone.replace(/ /g, '-')), 200);
        refusedFor(await startFrom(remoteAddress(), `nobody-${n++}@example.com`, phone), RECOVERY_START_LIMIT.windowSec);
        t.clock.advance(RECOVERY_START_LIMIT.windowSec * 1000);
        expectStatus(await startFrom(remoteAddress(), owner.email, phone), 200);
      });

      it(`recovery complete: ${RECOVERY_COMPLETE_LIMIT.perAddress} per client address per hour`, async () => {
        freshWindow(RECOVERY_COMPLETE_LIMIT.windowSec);
        const address = `198.51.100.${10 + (n % 200)}`;
        const completeFrom = (from: string) => t.app.inject({ method: 'POST', url: '/api/recovery/complete', remoteAddress: from, payload: { email: `nobody-${n++}@example.com`, sms_code: '123456', recovery_code: 'AAAA-BBBB-CCCC', new_password: 'a brand new password' } });
        for (let i = 0; i < RECOVERY_COMPLETE_LIMIT.perAddress; i++) expectStatus(await completeFrom(address), 401);
        refusedFor(await completeFrom(address), RECOVERY_COMPLETE_LIMIT.windowSec);
        expectStatus(await completeFrom(remoteAddress()), 401);
        t.clock.advance(RECOVERY_COMPLETE_LIMIT.windowSec * 1000);
        expectStatus(await completeFrom(address), 401);
      });
    });

    it('a recovery session cannot approve; it may register a new passkey, and that passkey approves', async () => {
      const { owner, phone, codes } = await prepared();
      const agent = await createAgent(t, owner as Owner, 'After recovery');
      expectStatus(await start(owner.email, phone), 200);
      const done = await complete({ email: owner.email, sms_code: await smsCodeFor(phone), recovery_code: codes[3], new_password: 'a brand new password' });
      expectStatus(done, 200);
      const recovered = { auth: { authorization: `Bearer ${json<{ session_token: string }>(done).session_token}` } };
      const txn = await accessRequest(t, agent);
      // without an assertion, and with the lost (removed) passkey: refused
      expectStatus(await respond(t, recovered, txn, { approve: true }), 401);
      const lostOptions = await t.app.inject({ method: 'GET', url: `/api/txn/${txn}/assertion-options`, headers: recovered.auth });
      if (lostOptions.statusCode === 200) {
        const opts = json<{ options: { challenge: string } }>(lostOptions).options;
        expectStatus(await respond(t, recovered, txn, { approve: true, assertion: owner.authenticator.assert(opts) }), 401);
      }
      // a new passkey from the recovery session, then approving with it works
      const fresh = await addPasskey(t, recovered, new SoftAuthenticator());
      const opts = await assertionOptions(t, recovered, txn);
      expectStatus(await respond(t, recovered, txn, { approve: true, assertion: fresh.assert(opts) }), 200);
      // a second passkey needs a passkey session (the recovery session made the first)
      const second = await t.app.inject({ method: 'GET', url: '/api/webauthn/register/options', headers: recovered.auth });
      expectStatus(second, 403);
    });
  });
}

suite('sqlite');
suite('postgres');
