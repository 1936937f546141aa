/**
 * docs/operations/sms.md cannot rot: every fenced block is marked and checked here. `<!-- env: NAME -->`
 * blocks, written to a .env, must start the service's configuration as they say; `<!-- exchange: NAME -->`
 * blocks (a request line, its JSON body, the status, the JSON answer) are run in order against a
 * service whose texts go to a Twilio stand-in. In an answer, a string `"<...>"` stands for any value;
 * in a request, `"<sms code>"` is the newest texted code and `"<recovery code>"` the first recovery code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEnv, parseConfig } from '../src/config/config.ts';
import { FixedClock } from '../src/clock.ts';
import { REPO_ROOT } from './helpers/child-process.ts';
import { testApp, type TestApp } from './helpers/app.ts';
import { startTwilioStandIn, type TwilioStandIn } from './helpers/stand-ins/twilio.ts';
import { SMS_PROVIDERS } from '../src/delivery/sms-providers.ts';

const PAGE = 'docs/operations/sms.md';
const text = readFileSync(join(REPO_ROOT, PAGE), 'utf8');
const blocks = [...text.matchAll(/(?:<!-- ([a-z]+): ([\w.-]+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ marker: m[1] ?? '', name: m[2] ?? '', body: m[4] ?? '' }));

/** `expected` with every `"<...>"` string taken as whatever `actual` has there. */
function fill(expected: unknown, actual: unknown): unknown {
  if (typeof expected === 'string' && /^<.*>$/.test(expected)) return actual;
  if (Array.isArray(expected)) return expected.map((e, i) => fill(e, Array.isArray(actual) ? actual[i] : undefined));
  if (expected && typeof expected === 'object') {
    const a = (actual ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(expected).map(([k, v]) => [k, fill(v, a[k])]));
  }
  return expected;
}

describe(PAGE, () => {
  it('every block is marked (env or exchange)', () => {
    assert.ok(blocks.length >= 7);
    for (const b of blocks) assert.ok(['env', 'exchange'].includes(b.marker), `an unmarked block in ${PAGE}: ${b.body.slice(0, 60)}`);
  });

  it('the settings table says what each provider file declares: required, default, secret', () => {
    for (const name of SMS_PROVIDERS.names) {
      for (const setting of SMS_PROVIDERS.get(name)?.settings ?? []) {
        const row = text.split('\n').find((l) => l.startsWith(`| \`${setting.key}\` |`));
        assert.ok(row, `${setting.key}: a row of the table in ${PAGE}`);
        if (setting.required) assert.match(row, /required/, `${setting.key} is required`);
        if (setting.default !== undefined) assert.ok(row.includes(`default \`${setting.default}\``), `${setting.key}: its default ${setting.default}`);
        if (setting.secret) assert.match(row, /never logged/, `${setting.key} is secret`);
      }
    }
  });

  it('env blocks configure the service as the page says', () => {
    for (const b of blocks.filter((x) => x.marker === 'env')) {
      const dir = mkdtempSync(join(tmpdir(), 'mandate-docs-sms-'));
      try {
        writeFileSync(join(dir, '.env'), b.body);
        const config = parseConfig(loadEnv(dir, {}));
        assert.equal(config.sms?.provider, 'twilio');
        assert.deepEqual(config.sms?.settings, { accountSid: 'AC0123456789abcdef0123456789abcdef', authToken: 'your-auth-token', from: '+15005550006', apiBase: 'https://api.twilio.com' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  describe('exchanges, run in order', () => {
    let t: TestApp;
    let twilio: TwilioStandIn;
    let auth: Record<string, string> = {};
    let recoveryCode = '';
    before(async () => {
      twilio = await startTwilioStandIn();
      t = await testApp({ env: { OUTBOX_POLL_MS: '600000', ...twilio.env }, clock: new FixedClock(Date.now()) });
      const res = await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 'ann@example.com', password: 'correct horse battery' } });
      auth = { authorization: `Bearer ${(res.json() as { session_token: string }).session_token}` };
    });
    after(async () => {
      await t.close();
      await twilio.close();
    });

    for (const b of blocks.filter((x) => x.marker === 'exchange')) {
      it(b.name, async () => {
        const [requestLine = '', body = '', status = '', answer = ''] = b.body.trim().split('\n');
        const [method = '', url = ''] = requestLine.split(' ');
        await t.services.outbox.drain();
        const payload = JSON.parse(body.replace('"<sms code>"', JSON.stringify(twilio.lastCode('+12015550123') ?? '')).replace('"<recovery code>"', JSON.stringify(recoveryCode))) as Record<string, unknown>;
        const res = await t.app.inject({ method: method as 'POST', url, headers: url.startsWith('/api/recovery/st') || url.startsWith('/api/recovery/complete') ? {} : auth, payload });
        assert.equal(res.statusCode, Number(status), res.body);
        const got = res.json() as Record<string, unknown>;
        assert.deepEqual(got, fill(JSON.parse(answer), got));
        if (url === '/api/recovery/codes') recoveryCode = (got.codes as string[])[0] ?? '';
      });
    }
  });
});
