import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { configProblems } from './helpers/config-problems.ts';
import { FixedClock } from '../src/clock.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { smsProvider as twilioProvider, twilioSender } from '../src/delivery/sms-providers/twilio.ts';
import { SMS_PROVIDERS } from '../src/delivery/sms-providers.ts';
import { CONFIG_KEYS } from '../src/config/keys.ts';
import { SMS_CHANNEL } from '../src/domain/sms/sms-queue.ts';
import { startTwilioStandIn, type TwilioStandIn } from './helpers/stand-ins/twilio.ts';
import { addPasskey, withPasskeySession } from './helpers/approvals.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';
import type { TestApp } from './helpers/app.ts';

// The SMS transport (decisions §14; issue 23 item 2): the Twilio adapter against a stand-in that
// checks every request, the outcome mapping, the configuration refused at start, and the outbox:
// with a provider the codes and the auth token never reach the log; without one (development) the
// SMS is written to the log and kept in the outbox.

describe('Twilio adapter against the stand-in', () => {
  let twilio: TwilioStandIn;
  const clock = { now: () => Date.parse('2026-11-28T12:00:00Z') };
  before(async () => {
    twilio = await startTwilioStandIn();
  });
  after(() => twilio.close());
  const settings = () => ({ accountSid: twilio.accountSid, authToken: twilio.authToken, from: twilio.from, apiBase: twilio.origin });

  it('POSTs the form (To, From, Body) to /2010-04-01/Accounts/{sid}/Messages.json with Basic auth: sent', async () => {
    const sender = twilioSender(settings(), { clock });
    assert.deepEqual(await sender.send({ to: '+12015550100', text: 'Your Mandate code: 123456.' }), { outcome: 'sent' });
    assert.deepEqual(twilio.messages.at(-1), { to: '+12015550100', from: twilio.from, body: 'Your Mandate code: 123456.' });
    assert.deepEqual(twilio.rejections, []);
  });

  it('maps answers: 429 retry after its Retry-After, 5xx retry, 400 failed with Twilio\'s code, and the text never in a detail', async () => {
    const sender = twilioSender(settings(), { clock });
    const sms = { to: '+12015550100', text: 'Your Mandate code: 654321.' };
    twilio.behave({ status: 429, retryAfter: '30' });
    assert.deepEqual(await sender.send(sms), { outcome: 'retry', detail: 'Twilio answered 429 (code 20429: stand-in answered 429)', retryAfterMs: 30_000 });
    twilio.behave({ status: 429, retryAfter: 'Sat, 28 Nov 2026 12:02:00 GMT' });
    const dated = await sender.send(sms);
    assert.equal(dated.outcome === 'retry' && dated.retryAfterMs, 120_000);
    twilio.behave({ status: 503, body: '<html>busy</html>' });
    assert.deepEqual(await sender.send(sms), { outcome: 'retry', detail: 'Twilio answered 503' });
    twilio.behave({ status: 400, body: JSON.stringify({ code: 21610, message: 'Attempt to send to unsubscribed recipient; text was Your Mandate code: 654321.' }) });
    const refused = await sender.send(sms);
    assert.equal(refused.outcome, 'failed');
    assert.ok('detail' in refused && refused.detail.includes('code 21610') && !refused.detail.includes('654321'), JSON.stringify(refused));
    // a number Twilio refuses (the stand-in's own check): failed, not retried
    const bad = await sender.send({ to: '+1', text: 'x' });
    assert.equal(bad.outcome, 'failed');
    assert.match('detail' in bad ? bad.detail : '', /21211/);
  });

  it('bad credentials: 401 from Twilio, retried (the operator can fix them), the token never in the detail; unreachable: retry', async () => {
    const wrong = twilioSender({ ...settings(), authToken: 'not-the-token-0000' }, { clock });
    const r = await wrong.send({ to: '+12015550100', text: 'Your Mandate code: 111222.' });
    assert.equal(r.outcome, 'retry');
    assert.ok('detail' in r && r.detail.includes('401') && !r.detail.includes('not-the-token-0000'));
    assert.equal(twilio.rejections.at(-1)?.status, 401);
    const away = twilioSender({ ...settings(), apiBase: 'http://127.0.0.1:9' }, { clock });
    assert.deepEqual(await away.send({ to: '+12015550100', text: 'x' }), { outcome: 'retry', detail: 'Twilio not reached: network error' });
  });
});

describe('SMS configuration', () => {
  const sid = `AC${'0'.repeat(32)}`;
  it('unset: no provider (the log and the outbox); the registry knows twilio', () => {
    assert.equal(parseConfig({}).sms, null);
    assert.deepEqual(SMS_PROVIDERS.names, ['twilio'], 'found in src/delivery/sms-providers/');
  });
  it('SMS_PROVIDER=twilio takes its settings, TWILIO_API_BASE defaulting to Twilio\'s', () => {
    const c = parseConfig({ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 'tok', TWILIO_FROM: '+15005550006' });
    assert.deepEqual(c.sms, { provider: 'twilio', settings: { accountSid: sid, authToken: 'tok', from: '+15005550006', apiBase: 'https://api.twilio.com' }, secrets: ['tok'] });
  });
  it('is refused at start when a field is missing or wrong, the provider unknown, or a TWILIO_ value set without it', () => {
    const missing = configProblems({ SMS_PROVIDER: 'twilio' });
    for (const k of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM']) assert.ok(missing.some((p) => p.includes(k)), `${k}: ${missing.join(' | ')}`);
    assert.ok(configProblems({ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'AC123', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+1' }).some((p) => /32 hex digits/.test(p)));
    assert.ok(configProblems({ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+1', TWILIO_API_BASE: 'ftp://x' }).some((p) => /TWILIO_API_BASE/.test(p)));
    assert.ok(configProblems({ SMS_PROVIDER: 'pigeon' }).some((p) => /SMS_PROVIDER must be one of twilio/.test(p)));
    assert.ok(configProblems({ TWILIO_AUTH_TOKEN: 'x' }).some((p) => /TWILIO_AUTH_TOKEN is set but SMS_PROVIDER is not twilio/.test(p)));
    assert.ok(configProblems({ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+1', TWILIO_API_BASE: 'not a url' }).some((p) => p === 'TWILIO_API_BASE is not a URL: "not a url"'));
    assert.deepEqual(twilioProvider.settings.map((s) => s.key), ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM', 'TWILIO_API_BASE']);
    assert.deepEqual(SMS_PROVIDERS.keys, ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM', 'TWILIO_API_BASE']);
    for (const k of SMS_PROVIDERS.keys) assert.ok(CONFIG_KEYS.includes(k), `${k} is a configuration key (keys.ts takes it from the provider)`);
  });
});

/** An app with a log we can read, on SQLite. */
async function loggedApp(env: Record<string, string>): Promise<TestApp & { log: () => string }> {
  const lines: string[] = [];
  const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const dir = mkdtempSync(join(tmpdir(), 'mandate-sms-'));
  const store = await openSqliteStore(dir);
  const config = parseConfig({ BASE_URL: 'http://localhost:8080', DATA_DIR: dir, LOG_LEVEL: 'trace', OUTBOX_POLL_MS: '600000', ...env });
  const clock = new FixedClock(Date.now());
  const built = await buildApp({ config, store, clock, logStream });
  await built.app.ready();
  return {
    ...built, clock, config,
    log: () => lines.join(''),
    async close() {
      await built.app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function owner(t: TestApp, email: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email, password: 'correct horse battery' } });
  const token = (res.json() as { session_token: string }).session_token;
  return { email, password: 'correct horse battery', token, auth: { authorization: `Bearer ${token}` } };
}

describe('SMS through the outbox', () => {
  it('with a provider: every code reaches the stand-in, and neither the codes nor the auth token reach the log', async () => {
    const twilio = await startTwilioStandIn();
    const t = await loggedApp(twilio.env);
    const secrets: string[] = [twilio.authToken, Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')];
    try {
      const o = await owner(t, 'sms-log@example.com');
      const phone = '+12015550142';
      await t.app.inject({ method: 'POST', url: '/api/phone/send', headers: o.auth, payload: { phone } });
      await t.services.outbox.drain();
      const code = twilio.lastCode(phone) ?? '';
      secrets.push(code);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/phone/verify', headers: o.auth, payload: { phone, code } })).statusCode, 200);
      const codes = (await t.app.inject({ method: 'POST', url: '/api/recovery/codes', headers: o.auth, payload: {} })).json().codes as string[];
      secrets.push(...codes, ...codes.map((c) => c.replace(/-/g, '')));
      await t.app.inject({ method: 'POST', url: '/api/recovery/start', payload: { email: o.email, phone } });
      await t.services.outbox.drain();
      const smsCode = twilio.lastCode(phone) ?? '';
      assert.notEqual(smsCode, code);
      secrets.push(smsCode, 'a new password 123');
      // a failing send is logged, without the text
      twilio.behave({ status: 429, retryAfter: '30' });
      await t.app.inject({ method: 'POST', url: '/api/phone/send', headers: o.auth, payload: { phone: '+12015550143' } });
      await t.services.outbox.drain();
      const [retrying] = (await t.services.store.outbox.list({ userId: (await t.services.store.users.byEmail(o.email))!.id, kind: 'phone_code' })).filter((m) => m.sentAt === null);
      assert.ok(retrying && retrying.nextAttemptAt >= t.clock.now() + 30_000, 'the retry waits for Retry-After');
      const done = await t.app.inject({ method: 'POST', url: '/api/recovery/complete', payload: { email: o.email, sms_code: smsCode, recovery_code: codes[0], new_password: 'a new password 123' } });
      assert.equal(done.statusCode, 200, done.body);
      secrets.push((done.json() as { session_token: string }).session_token);
    } finally {
      await t.close();
      await twilio.close();
    }
    const log = t.log();
    assert.match(log, /outbox: SMS sent/);
    assert.match(log, /outbox: SMS not sent; will retry/);
    for (const s of secrets) assert.equal(log.includes(s), false, `a secret reached the log: ${s.slice(0, 6)}...`);
  });

  it('without a provider (development): the SMS is written to the log, said so at start, and kept in the outbox; sealed at rest under KEY_ENCRYPTION_KEY', async () => {
    const t = await loggedApp({ KEY_ENCRYPTION_KEY: 'a-long-enough-secret-for-tests' });
    try {
      const o = await owner(t, 'sms-dev@example.com');
      await t.app.inject({ method: 'POST', url: '/api/phone/send', headers: o.auth, payload: { phone: '+44 20 7946 0958' } });
      await t.services.outbox.drain();
      const log = t.log();
      assert.match(log, /sms: SMS_PROVIDER is not set/);
      const line = log.split('\n').find((l) => l.includes('SMS not sent (SMS_PROVIDER is not set; development only)'));
      assert.ok(line, 'the SMS is in the log');
      const code = /code: (\d{6})/.exec(line)?.[1];
      assert.ok(code);
      assert.ok(line.includes('+442079460958'));
      const userId = (await t.services.store.users.byEmail(o.email))!.id;
      const [kept] = await t.services.store.outbox.list({ userId, kind: 'phone_code' });
      assert.equal(kept?.channel, SMS_CHANNEL);
      assert.ok(kept?.sentAt !== null);
      assert.equal(JSON.stringify(kept?.payload).includes(code), false, 'sealed at rest');
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/phone/verify', headers: o.auth, payload: { phone: '+442079460958', code } })).statusCode, 200);
    } finally {
      await t.close();
    }
  });

  it('a passkey owner\'s codes need a passkey session (SoftAuthenticator)', async () => {
    const t = await loggedApp({});
    try {
      const o = await owner(t, 'sms-pk@example.com');
      const key = new SoftAuthenticator();
      await addPasskey(t, o, key);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/recovery/codes', headers: o.auth, payload: {} })).statusCode, 403);
      const pk = await withPasskeySession(t, { ...o, user: { id: '', email: o.email }, session_token: o.token, authenticator: key } as never);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/recovery/codes', headers: pk.auth, payload: {} })).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
