import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadEnv, parseConfig } from '../src/config/config.ts';
import { loadSmsProviders, SMS_PROVIDERS, type SmsProviders } from '../src/delivery/sms-providers.ts';
import { configProblems } from './helpers/config-problems.ts';
import { startServer } from './helpers/server-process.ts';
import { call, expectStatus } from './helpers/over-http.ts';
import { startTwilioStandIn } from './helpers/stand-ins/twilio.ts';
import { until } from './helpers/until.ts';

// Issue 23: "another provider must be one new file". A provider file dropped into a folder the
// registry reads is a provider: SMS_PROVIDER takes its name, .env and the start checks take its
// settings, and its sender sends, with no list edited anywhere. The registry takes the folder, so
// here a temporary one holds a provider written by the test; the service's own folder is read the
// same way, from the sources under tsx and from the build under `npm start`.

/** A provider that posts to a loft (a local HTTP server here): nothing but this file. */
const PIGEON = `
const checkUrl = (v) => (/^https?:\\/\\//.test(v) ? undefined : \`must be an http(s) URL, got "\${v}"\`);
export const smsProvider = {
  name: 'pigeon',
  settings: [
    { key: 'PIGEON_LOFT_URL', about: 'where the loft takes messages (an http(s) URL)', required: true, check: checkUrl },
    { key: 'PIGEON_KEY', about: 'the loft key', required: true, secret: true, check: (v) => (v.length >= 8 ? undefined : \`must be 8 characters or more, got "\${v}"\`) },
    { key: 'PIGEON_BIRDS', about: 'birds per message', default: '1' },
  ],
  configure: (v) => ({ loft: v.PIGEON_LOFT_URL, key: v.PIGEON_KEY, birds: Number(v.PIGEON_BIRDS) }),
  sender: (s) => ({
    async send(sms) {
      const r = await fetch(s.loft, { method: 'POST', headers: { 'x-key': s.key }, body: JSON.stringify({ ...sms, birds: s.birds }) });
      const said = await r.text();
      if (r.ok) return { outcome: 'sent' };
      return { outcome: r.status >= 500 ? 'retry' : 'failed', detail: \`loft answered \${r.status}: \${said}\` };
    },
  }),
};
`;

describe('an SMS provider is one file', () => {
  let folder: string;
  let providers: SmsProviders;
  let loft: Server;
  let loftUrl = '';
  const landed: { key: string; body: string }[] = [];
  let loftAnswer: { status: number; body: string } | null = null;

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'mandate-sms-providers-'));
    writeFileSync(join(folder, 'pigeon.ts'), PIGEON);
    // Not providers: a helper a provider file may share, and a hidden file.
    writeFileSync(join(folder, '_shared.ts'), 'export const x = 1;\n');
    writeFileSync(join(folder, '.draft.ts'), 'throw new Error("never loaded");\n');
    providers = await loadSmsProviders(pathToFileURL(`${folder}/`));
    loft = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (loftAnswer) return void res.writeHead(loftAnswer.status).end(loftAnswer.body);
        landed.push({ key: String(req.headers['x-key']), body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(201).end('{}');
      });
    });
    await new Promise<void>((resolve) => loft.listen(0, '127.0.0.1', resolve));
    loftUrl = `http://127.0.0.1:${(loft.address() as AddressInfo).port}/messages`;
  });
  after(async () => {
    rmSync(folder, { recursive: true, force: true });
    await new Promise<void>((resolve) => loft.close(() => resolve()));
  });

  it('the folder read is the provider list: its name and settings, nothing else', () => {
    assert.deepEqual(providers.names, ['pigeon']);
    assert.deepEqual(providers.keys, ['PIGEON_LOFT_URL', 'PIGEON_KEY', 'PIGEON_BIRDS']);
    // The service's own folder: twilio, and none of the test's.
    assert.deepEqual(SMS_PROVIDERS.names, ['twilio']);
  });

  it('configuration takes its settings: defaults, required ones, its checks, and no secret in a problem', () => {
    const env = { SMS_PROVIDER: 'pigeon', PIGEON_LOFT_URL: loftUrl, PIGEON_KEY: 'loft-key-123456' };
    const config = parseConfig(env, { smsProviders: providers });
    assert.deepEqual(config.sms, { provider: 'pigeon', settings: { loft: loftUrl, key: 'loft-key-123456', birds: 1 }, secrets: ['loft-key-123456'] });
    const problems = (e: Record<string, string>) => {
      try {
        parseConfig(e, { smsProviders: providers });
        return [];
      } catch (err) {
        return (err as { problems: string[] }).problems;
      }
    };
    assert.deepEqual(problems({ SMS_PROVIDER: 'pigeon' }), [
      'SMS_PROVIDER=pigeon needs PIGEON_LOFT_URL: where the loft takes messages (an http(s) URL)',
      'SMS_PROVIDER=pigeon needs PIGEON_KEY: the loft key',
    ]);
    assert.deepEqual(problems({ ...env, PIGEON_LOFT_URL: 'ftp://x', PIGEON_KEY: 'short' }), ['PIGEON_LOFT_URL must be an http(s) URL, got "ftp://x"', 'PIGEON_KEY must be 8 characters or more, got "[the value]"']);
    assert.deepEqual(problems({ PIGEON_KEY: 'loft-key-123456' }), ['PIGEON_KEY is set but SMS_PROVIDER is not pigeon: set SMS_PROVIDER=pigeon to send text messages through it']);
    assert.deepEqual(problems({ SMS_PROVIDER: 'twilio' }), ['SMS_PROVIDER must be one of pigeon (or unset: text messages go to the log), got "twilio"']);
    // The service's own registry does not know the test's provider.
    assert.ok(configProblems({ SMS_PROVIDER: 'pigeon' }).some((p) => /SMS_PROVIDER must be one of twilio/.test(p)));
  });

  it('.env accepts its settings (and refuses them where the provider is not installed)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-sms-env-'));
    try {
      writeFileSync(join(dir, '.env'), `SMS_PROVIDER=pigeon\nPIGEON_LOFT_URL=${loftUrl}\nPIGEON_KEY=loft-key-123456\nPIGEON_BIRDS=3\n`);
      const config = parseConfig(loadEnv(dir, {}, providers), { smsProviders: providers });
      assert.deepEqual(config.sms?.settings, { loft: loftUrl, key: 'loft-key-123456', birds: 3 });
      assert.throws(() => loadEnv(dir, {}), /unknown setting PIGEON_LOFT_URL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('its sender sends; a secret echoed in a detail is taken out by the registry', async () => {
    const config = parseConfig({ SMS_PROVIDER: 'pigeon', PIGEON_LOFT_URL: loftUrl, PIGEON_KEY: 'loft-key-123456' }, { smsProviders: providers });
    assert.ok(config.sms);
    const sender = providers.sender(config.sms, { clock: { now: () => Date.now() } });
    assert.deepEqual(await sender.send({ to: '+12015550100', text: 'Your code: 123456.' }), { outcome: 'sent' });
    assert.deepEqual(landed.at(-1), { key: 'loft-key-123456', body: JSON.stringify({ to: '+12015550100', text: 'Your code: 123456.', birds: 1 }) });
    loftAnswer = { status: 503, body: 'bad key loft-key-123456' };
    assert.deepEqual(await sender.send({ to: '+12015550100', text: 'x' }), { outcome: 'retry', detail: 'loft answered 503: bad key [redacted]' });
    loftAnswer = null;
  });

  it('a broken provider file stops the start, saying which file and what is wrong', async () => {
    const cases: [string, string, RegExp][] = [
      ['owl.ts', 'export const other = 1;', /owl\.ts does not export `smsProvider`/],
      ['owl.ts', "export const smsProvider = { name: 'hawk', settings: [], configure: () => 0, sender: () => 0 };", /its name "hawk" must be its file's name \("owl"\)/],
      ['owl.ts', "export const smsProvider = { name: 'owl', settings: [{ key: 'SMTP_URL', about: 'x' }], configure: () => 0, sender: () => 0 };", /setting "SMTP_URL" must be upper case and start with OWL_/],
      ['owl.ts', "export const smsProvider = { name: 'owl', settings: [{ key: 'OWL_A', about: 'x', required: true, default: 'y' }], configure: () => 0, sender: () => 0 };", /OWL_A is required and has a default/],
      ['owl.ts', "export const smsProvider = { name: 'owl', settings: [{ key: 'OWL_A' }], configure: () => 0, sender: () => 0 };", /OWL_A needs an `about`/],
    ];
    for (const [file, text, expected] of cases) {
      const dir = mkdtempSync(join(tmpdir(), 'mandate-sms-broken-'));
      try {
        writeFileSync(join(dir, file), text);
        await assert.rejects(loadSmsProviders(pathToFileURL(`${dir}/`)), expected);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

describe('the built service (npm start) finds its providers in dist/', { timeout: 240_000 }, () => {
  it('SMS_PROVIDER=twilio from the compiled provider file: a phone code reaches the stand-in', async () => {
    const twilio = await startTwilioStandIn();
    const server = await startServer({ name: 'sms-built', healthyWithinMs: 120_000, env: { ...twilio.env, OUTBOX_POLL_MS: '200' } });
    try {
      const signUp = expectStatus(await call<{ session_token: string }>(server, 'POST', '/api/users', { email: 'built-sms@example.com', password: 'correct horse battery' }), 200, 'sign-up');
      const auth = { authorization: `Bearer ${signUp.body.session_token}` };
      expectStatus(await call(server, 'POST', '/api/phone/send', { phone: '+12015550177' }, auth), 200, 'phone send');
      await until('the text at the Twilio stand-in', () => twilio.lastCode('+12015550177'), { ms: 20_000, describe: () => server.logs().slice(-2000) });
      assert.doesNotMatch(server.logs(), /SMS_PROVIDER is not set/);
    } finally {
      await server.stop();
      await twilio.close();
    }
  });
});
