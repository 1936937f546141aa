import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadEnv, parseConfig, unsafeDefaults } from '../src/config/config.ts';
import { generateVapidKeys } from '../src/delivery/web-push.ts';
import { DEFAULT_PUSH_SERVICE_HOSTS } from '../src/outbound/push-hosts.ts';
import { configProblems } from './helpers/config-problems.ts';

describe('configuration', () => {
  it('has documented defaults', () => {
    const c = parseConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.baseUrl, 'http://localhost:8080');
    assert.equal(c.databaseUrl, '');
    assert.equal(c.keyRotationGraceSec, 86400);
    assert.match(c.dataDir, /data$/);
  });

  it('derives BASE_URL from PORT and strips a trailing slash', () => {
    assert.equal(parseConfig({ PORT: '9000' }).baseUrl, 'http://localhost:9000');
    assert.equal(parseConfig({ BASE_URL: 'https://mandate.example.com/' }).baseUrl, 'https://mandate.example.com');
  });

  it('takes NODE_INTERNAL_URL as an http(s) address without query, fragment or credentials; empty: one node', () => {
    assert.equal(parseConfig({}).nodeInternalUrl, null);
    assert.equal(parseConfig({ NODE_INTERNAL_URL: '' }).nodeInternalUrl, null);
    assert.equal(parseConfig({ NODE_INTERNAL_URL: 'http://10.0.0.5:8080/' }).nodeInternalUrl, 'http://10.0.0.5:8080');
    for (const bad of ['10.0.0.5:8080', 'ws://10.0.0.5', 'http://10.0.0.5/?a=1', 'http://u:p@10.0.0.5']) {
      assert.throws(() => parseConfig({ NODE_INTERNAL_URL: bad }), (e: unknown) => e instanceof ConfigError && /NODE_INTERNAL_URL/.test(e.problems.join()), bad);
    }
  });

  it('takes TAKEOVER_RELAY as process (the default) or inline', () => {
    assert.equal(parseConfig({}).takeoverRelay, 'process');
    assert.equal(parseConfig({ TAKEOVER_RELAY: 'inline' }).takeoverRelay, 'inline');
    assert.equal(parseConfig({ TAKEOVER_RELAY: '' }).takeoverRelay, 'process');
    for (const bad of ['Process', 'child', 'thread']) {
      assert.throws(() => parseConfig({ TAKEOVER_RELAY: bad }), (e: unknown) => e instanceof ConfigError && /TAKEOVER_RELAY must be process or inline/.test(e.problems.join()), bad);
    }
  });

  it('takes WBA_AGENT_DOMAIN as a bare domain name (lower-cased); empty: addresses under BASE_URL/wba', () => {
    assert.equal(parseConfig({}).wbaAgentDomain, null);
    assert.equal(parseConfig({ WBA_AGENT_DOMAIN: '' }).wbaAgentDomain, null);
    assert.equal(parseConfig({ WBA_AGENT_DOMAIN: 'Agents.Example.com.' }).wbaAgentDomain, 'agents.example.com');
    for (const bad of ['https://agents.example.com', 'agents.example.com:443', 'agents.example.com/x', 'localhost', '-a.example.com', 'a..b']) {
      assert.throws(() => parseConfig({ WBA_AGENT_DOMAIN: bad }), (e: unknown) => e instanceof ConfigError && /WBA_AGENT_DOMAIN/.test(e.problems.join()), bad);
    }
  });

  it('reports every bad value at once', () => {
    assert.throws(
      () => parseConfig({ PORT: 'eighty', BASE_URL: 'ftp://x', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', KEY_ENCRYPTION_KEY: 'short', TRUST_PROXY: 'maybe', ADMIN_EMAILS: 'nobody' }),
      (e: unknown) => e instanceof ConfigError && e.problems.length === 7,
    );
  });

  it('refuses unknown keys in .env and lets the environment win over it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-cfg-'));
    writeFileSync(join(dir, '.env'), 'PORT=9100\nHOST=0.0.0.0\n# comment\n');
    const env = loadEnv(dir, { PORT: '9200' });
    assert.equal(env.PORT, '9200');
    assert.equal(env.HOST, '0.0.0.0');
    writeFileSync(join(dir, '.env'), 'PROT=9100\n');
    assert.throws(() => loadEnv(dir, {}), /unknown setting PROT/);
  });

  it('warns loudly about development defaults', () => {
    const w = unsafeDefaults(parseConfig({}));
    assert.ok(w.some((m) => /KEY_ENCRYPTION_KEY/.test(m)));
    assert.deepEqual(unsafeDefaults(parseConfig({ BASE_URL: 'https://m.example.com', KEY_ENCRYPTION_KEY: 'x'.repeat(32), ADMIN_EMAILS: 'a@b.c' })), []);
  });

  const problems = configProblems;
  const SAFE = { BASE_URL: 'https://m.example.com', KEY_ENCRYPTION_KEY: 'x'.repeat(32), ADMIN_EMAILS: 'a@b.c' };

  it('push, Android and outbox settings have documented defaults', () => {
    const c = parseConfig({});
    assert.equal(c.outboundAllowLoopback, false);
    assert.equal(c.vapid, null);
    assert.equal(c.fcm, null);
    assert.deepEqual(c.android, { packageName: null, certSha256: [], apkPath: null });
    assert.equal(c.outboxPollMs, 2000);
    assert.equal(c.outboxClaimSec, 60);
  });

  it('takes both VAPID keys or neither, each of the right length', () => {
    const { publicKey, privateKey } = generateVapidKeys();
    assert.deepEqual(parseConfig({ VAPID_PUBLIC_KEY: publicKey, VAPID_PRIVATE_KEY: privateKey }).vapid, { publicKey, privateKey });
    assert.match(problems({ VAPID_PUBLIC_KEY: publicKey }).join('\n'), /VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY go together/);
    assert.match(problems({ VAPID_PRIVATE_KEY: privateKey }).join('\n'), /VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY go together/);
    // 64 bytes (a point without its 0x04 prefix) and 31 bytes: both named.
    const short = problems({ VAPID_PUBLIC_KEY: Buffer.alloc(64, 4).toString('base64url'), VAPID_PRIVATE_KEY: Buffer.alloc(31, 1).toString('base64url') });
    assert.equal(short.length, 2);
    assert.match(short[0] ?? '', /VAPID_PUBLIC_KEY must be base64url of a 65-byte/);
    assert.match(short[1] ?? '', /VAPID_PRIVATE_KEY must be base64url of a 32-byte/);
    // Standard base64 (+ and /) is not base64url.
    assert.match(problems({ VAPID_PUBLIC_KEY: `${publicKey.slice(0, -2)}+/`, VAPID_PRIVATE_KEY: privateKey }).join('\n'), /VAPID_PUBLIC_KEY must be base64url/);
    // Swapped keys are each the wrong length.
    assert.equal(problems({ VAPID_PUBLIC_KEY: privateKey, VAPID_PRIVATE_KEY: publicKey }).length, 2);
  });

  it('takes a mailto: or https: VAPID_SUBJECT, and defaults it from BASE_URL', () => {
    assert.equal(parseConfig({ BASE_URL: 'https://m.example.com/mandate/' }).vapidSubject, 'https://m.example.com');
    assert.equal(parseConfig({ BASE_URL: 'http://mandate.internal:8080' }).vapidSubject, 'mailto:push@mandate.internal');
    assert.equal(parseConfig({}).vapidSubject, 'mailto:push@localhost');
    assert.equal(parseConfig({ VAPID_SUBJECT: 'mailto:ops@example.com' }).vapidSubject, 'mailto:ops@example.com');
    assert.equal(parseConfig({ VAPID_SUBJECT: 'https://example.com/contact' }).vapidSubject, 'https://example.com/contact');
    for (const bad of ['ops@example.com', 'mailto:nobody', 'http://example.com', 'https://', 'mailto:a@b c']) {
      assert.match(problems({ VAPID_SUBJECT: bad }).join('\n'), /VAPID_SUBJECT must be a mailto: address or an https: URL/, bad);
    }
  });

  it('takes FCM_PROJECT_ID and FCM_SERVICE_ACCOUNT_FILE together, an existing file and a project id', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-cfg-fcm-'));
    const file = join(dir, 'service-account.json');
    writeFileSync(file, '{}');
    const c = parseConfig({ FCM_PROJECT_ID: 'mandate-prod', FCM_SERVICE_ACCOUNT_FILE: file });
    assert.deepEqual(c.fcm, { projectId: 'mandate-prod', serviceAccountFile: file, apiBase: 'https://fcm.googleapis.com', tokenUrl: 'https://oauth2.googleapis.com/token' });
    assert.match(problems({ FCM_PROJECT_ID: 'mandate-prod' }).join('\n'), /FCM_PROJECT_ID is set but FCM_SERVICE_ACCOUNT_FILE is not/);
    assert.match(problems({ FCM_SERVICE_ACCOUNT_FILE: file }).join('\n'), /FCM_SERVICE_ACCOUNT_FILE is set but FCM_PROJECT_ID is not/);
    assert.match(problems({ FCM_PROJECT_ID: 'mandate-prod', FCM_SERVICE_ACCOUNT_FILE: join(dir, 'missing.json') }).join('\n'), /FCM_SERVICE_ACCOUNT_FILE: no file at/);
    for (const bad of ['Mandate-Prod', 'mandate_prod', 'abc', '1mandate', 'a'.repeat(31)]) {
      assert.match(problems({ FCM_PROJECT_ID: bad, FCM_SERVICE_ACCOUNT_FILE: file }).join('\n'), /FCM_PROJECT_ID must be a Firebase project id/, bad);
    }
    // An address setting without a project would be silently unused: refused, naming what is missing.
    assert.match(problems({ FCM_API_BASE: 'https://fcm.test' }).join('\n'), /FCM_API_BASE is set but FCM_PROJECT_ID is not/);
    assert.match(problems({ FCM_PROJECT_ID: 'mandat-', FCM_SERVICE_ACCOUNT_FILE: file }).join('\n'), /FCM_PROJECT_ID must be/, 'no trailing hyphen');
    assert.match(problems({ FCM_PROJECT_ID: 'mandt', FCM_SERVICE_ACCOUNT_FILE: file }).join('\n'), /FCM_PROJECT_ID must be/, 'at least 6 characters');
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes http(s) FCM_API_BASE and FCM_TOKEN_URL (a local stand-in), nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-cfg-fcm-'));
    const file = join(dir, 'service-account.json');
    writeFileSync(file, '{}');
    const fcm = { FCM_PROJECT_ID: 'mandate-test', FCM_SERVICE_ACCOUNT_FILE: file };
    const c = parseConfig({ ...fcm, FCM_API_BASE: 'http://127.0.0.1:9099/', FCM_TOKEN_URL: 'http://127.0.0.1:9099/token' });
    assert.equal(c.fcm?.apiBase, 'http://127.0.0.1:9099');
    assert.equal(c.fcm?.tokenUrl, 'http://127.0.0.1:9099/token');
    assert.match(problems({ ...fcm, FCM_API_BASE: 'ftp://fcm.example' }).join('\n'), /FCM_API_BASE must be an http\(s\) URL/);
    assert.match(problems({ ...fcm, FCM_API_BASE: 'fcm.googleapis.com' }).join('\n'), /FCM_API_BASE is not a URL/);
    assert.match(problems({ ...fcm, FCM_TOKEN_URL: 'file:///etc/passwd' }).join('\n'), /FCM_TOKEN_URL must be an http\(s\) URL/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('checks the Android package name and certificate fingerprints', () => {
    const fp = '14:6d:e9:83:c5:73:06:50:d8:ee:b9:95:2f:34:fc:64:16:a0:83:42:e6:1d:be:a8:8a:04:96:b2:3f:cf:44:e5';
    const c = parseConfig({ ANDROID_PACKAGE_NAME: 'com.example.mandate', ANDROID_CERT_SHA256: ` ${fp} , ${fp.toUpperCase()}`, ANDROID_APK_PATH: 'app/mandate.apk' });
    assert.equal(c.android.packageName, 'com.example.mandate');
    assert.deepEqual(c.android.certSha256, [fp.toUpperCase(), fp.toUpperCase()]);
    assert.match(c.android.apkPath ?? '', /^\/.*app\/mandate\.apk$/);
    for (const bad of ['mandate', 'com.example.', '1com.example', 'com.example-app.mandate', 'com..mandate']) {
      assert.match(problems({ ANDROID_PACKAGE_NAME: bad }).join('\n'), /ANDROID_PACKAGE_NAME must be a Java package name/, bad);
    }
    for (const bad of ['AB:CD', fp.replace(/:/g, ''), `${fp}:00`, fp.replace('14', 'G4')]) {
      assert.match(problems({ ANDROID_CERT_SHA256: bad }).join('\n'), /ANDROID_CERT_SHA256: .* is not a SHA-256 fingerprint/, bad);
    }
  });

  it('bounds OUTBOX_POLL_MS and OUTBOX_CLAIM_SECONDS', () => {
    assert.equal(parseConfig({ OUTBOX_POLL_MS: '50' }).outboxPollMs, 50);
    assert.equal(parseConfig({ OUTBOX_POLL_MS: '600000' }).outboxPollMs, 600_000);
    assert.equal(parseConfig({ OUTBOX_CLAIM_SECONDS: '10' }).outboxClaimSec, 10);
    assert.equal(parseConfig({ OUTBOX_CLAIM_SECONDS: '3600' }).outboxClaimSec, 3600);
    for (const bad of ['49', '600001', '1.5', 'soon']) assert.match(problems({ OUTBOX_POLL_MS: bad }).join('\n'), /OUTBOX_POLL_MS must be an integer from 50 to 600000/, bad);
    for (const bad of ['9', '3601', '60s']) assert.match(problems({ OUTBOX_CLAIM_SECONDS: bad }).join('\n'), /OUTBOX_CLAIM_SECONDS must be an integer from 10 to 3600/, bad);
  });

  it('takes PUSH_SERVICE_HOSTS as host names and *.domain patterns, * for any, the push services by default', () => {
    assert.deepEqual(parseConfig({}).pushServiceHosts, DEFAULT_PUSH_SERVICE_HOSTS);
    assert.deepEqual(parseConfig({ PUSH_SERVICE_HOSTS: ' Push.Example.com , *.push.example.net' }).pushServiceHosts, ['push.example.com', '*.push.example.net']);
    assert.equal(parseConfig({ PUSH_SERVICE_HOSTS: '*' }).pushServiceHosts, null);
    for (const bad of ['https://push.example.com', 'push.*.com', 'localhost', ',']) {
      assert.match(problems({ PUSH_SERVICE_HOSTS: bad }).join('\n'), /PUSH_SERVICE_HOSTS/, bad);
    }
  });

  it('warns loudly when OUTBOUND_ALLOW_LOOPBACK is on, and takes only true or false', () => {
    assert.deepEqual(unsafeDefaults(parseConfig({ ...SAFE, OUTBOUND_ALLOW_LOOPBACK: 'false' })), []);
    const on = parseConfig({ ...SAFE, OUTBOUND_ALLOW_LOOPBACK: 'true' });
    assert.equal(on.outboundAllowLoopback, true);
    const warnings = unsafeDefaults(on);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /OUTBOUND_ALLOW_LOOPBACK is on/);
    assert.match(problems({ OUTBOUND_ALLOW_LOOPBACK: 'sometimes' }).join('\n'), /OUTBOUND_ALLOW_LOOPBACK must be true or false/);
  });

  it('reports every bad push setting at once', () => {
    const found = problems({ VAPID_PUBLIC_KEY: 'x', VAPID_SUBJECT: 'nobody', FCM_SERVICE_ACCOUNT_FILE: '/nowhere.json', ANDROID_PACKAGE_NAME: 'x', ANDROID_CERT_SHA256: 'x', OUTBOX_POLL_MS: '0', OUTBOX_CLAIM_SECONDS: '0', OUTBOUND_ALLOW_LOOPBACK: 'x' });
    assert.equal(found.length, 8, found.join('\n'));
  });

  it('exits with code 2 and a clear message on a bad value', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: 'nope' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /PORT must be an integer/);
  });
});
