import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEnv, parseConfig } from '../src/config/config.ts';
import { configProblems } from './helpers/config-problems.ts';

// OAUTH_PROVIDERS and OAUTH_<NAME>_* (decisions §15): complete providers start, incomplete ones stop the start.

const problems = configProblems;

describe('identity provider settings', () => {
  it('none by default', () => {
    assert.deepEqual(parseConfig({}).oauthProviders, []);
  });

  it('google and microsoft have default issuers and labels; others name theirs', () => {
    const config = parseConfig({
      OAUTH_PROVIDERS: 'Google, microsoft,keycloak',
      OAUTH_GOOGLE_CLIENT_ID: 'g-id', OAUTH_GOOGLE_CLIENT_SECRET: 'g-secret',
      OAUTH_MICROSOFT_CLIENT_ID: 'm-id', OAUTH_MICROSOFT_CLIENT_SECRET: 'm-secret', OAUTH_MICROSOFT_LABEL: 'Microsoft work account',
      OAUTH_KEYCLOAK_ISSUER: 'https://sso.example.com/realms/home/', OAUTH_KEYCLOAK_CLIENT_ID: 'k-id', OAUTH_KEYCLOAK_CLIENT_SECRET: 'k-secret',
    });
    assert.deepEqual(config.oauthProviders, [
      { name: 'google', label: 'Google', issuer: 'https://accounts.google.com', clientId: 'g-id', clientSecret: 'g-secret' },
      { name: 'microsoft', label: 'Microsoft work account', issuer: 'https://login.microsoftonline.com/common/v2.0', clientId: 'm-id', clientSecret: 'm-secret' },
      { name: 'keycloak', label: 'keycloak', issuer: 'https://sso.example.com/realms/home', clientId: 'k-id', clientSecret: 'k-secret' },
    ]);
  });

  it('refuses to start with an incomplete provider, naming what is missing', () => {
    assert.match(problems({ OAUTH_PROVIDERS: 'google', OAUTH_GOOGLE_CLIENT_ID: 'g' }).join('\n'), /"google" but OAUTH_GOOGLE_CLIENT_SECRET is not set/);
    assert.match(problems({ OAUTH_PROVIDERS: 'keycloak', OAUTH_KEYCLOAK_CLIENT_ID: 'k', OAUTH_KEYCLOAK_CLIENT_SECRET: 's' }).join('\n'), /OAUTH_KEYCLOAK_ISSUER is not set/);
    assert.match(problems({ OAUTH_PROVIDERS: 'bad-name' }).join('\n'), /not a provider name/);
    assert.match(problems({ OAUTH_PROVIDERS: 'google,google', OAUTH_GOOGLE_CLIENT_ID: 'g', OAUTH_GOOGLE_CLIENT_SECRET: 's' }).join('\n'), /twice/);
    assert.match(problems({ OAUTH_GITHUB_CLIENT_ID: 'x' }).join('\n'), /OAUTH_GITHUB_CLIENT_ID is set but OAUTH_PROVIDERS does not name "github"/);
  });

  it('an http: issuer only with OUTBOUND_ALLOW_LOOPBACK (development and tests)', () => {
    const env = { OAUTH_PROVIDERS: 'dev', OAUTH_DEV_ISSUER: 'http://127.0.0.1:9000', OAUTH_DEV_CLIENT_ID: 'd', OAUTH_DEV_CLIENT_SECRET: 's' };
    assert.match(problems(env).join('\n'), /OAUTH_DEV_ISSUER must be an https: URL/);
    assert.equal(parseConfig({ ...env, OUTBOUND_ALLOW_LOOPBACK: 'true' }).oauthProviders[0]?.issuer, 'http://127.0.0.1:9000');
    assert.match(problems({ ...env, OAUTH_DEV_ISSUER: 'not a url' }).join('\n'), /not a URL/);
  });

  it('.env takes the per-provider keys, and still refuses unknown ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-oauth-env-'));
    try {
      writeFileSync(join(dir, '.env'), 'OAUTH_PROVIDERS=google\nOAUTH_GOOGLE_CLIENT_ID=g\nOAUTH_GOOGLE_CLIENT_SECRET=s\n');
      assert.equal(parseConfig(loadEnv(dir, {})).oauthProviders[0]?.name, 'google');
      writeFileSync(join(dir, '.env'), 'OAUTH_GOOGLE_CLIENT_IDENTIFIER=g\n');
      assert.throws(() => loadEnv(dir, {}), /unknown setting OAUTH_GOOGLE_CLIENT_IDENTIFIER/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
