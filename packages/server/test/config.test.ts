import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadEnv, parseConfig, unsafeDefaults } from '../src/config/config.ts';

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

  it('exits with code 2 and a clear message on a bad value', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: 'nope' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /PORT must be an integer/);
  });
});
