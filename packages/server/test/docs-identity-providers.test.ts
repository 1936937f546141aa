/**
 * docs/operations/identity-providers.md cannot rot: each of its settings blocks (marked
 * `<!-- env: NAME -->`) is written to a `.env` and must start the service's configuration with the
 * providers it names; an unmarked block fails. The redirect URI it tells operators to register is
 * the one the service sends.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEnv, parseConfig } from '../src/config/config.ts';
import { redirectUriOf } from '../src/domain/identity-providers/issuer-port.ts';
import { REPO_ROOT } from './helpers/child-process.ts';

const PAGE = 'docs/operations/identity-providers.md';
const text = readFileSync(join(REPO_ROOT, PAGE), 'utf8');
const blocks = [...text.matchAll(/(?:<!-- ([a-z]+): ([\w.-]+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ marker: m[1] ?? '', name: m[2] ?? '', body: m[4] ?? '' }));

describe(PAGE, () => {
  it('has only marked settings blocks', () => {
    assert.ok(blocks.length >= 3);
    for (const b of blocks) assert.equal(b.marker, 'env', `an unmarked block: ${b.body}`);
  });

  for (const b of blocks.filter((x) => x.marker === 'env')) {
    it(`the ${b.name} settings start the service with the providers they name`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'mandate-idp-docs-'));
      try {
        writeFileSync(join(dir, '.env'), `BASE_URL=https://mandate.example.com\n${b.body}`);
        const config = parseConfig(loadEnv(dir, {}));
        const named = /^OAUTH_PROVIDERS=(.*)$/m.exec(b.body)?.[1]?.split(',') ?? [];
        assert.deepEqual(config.oauthProviders.map((p) => p.name), named);
        for (const p of config.oauthProviders) {
          assert.ok(p.issuer.startsWith('https://'));
          assert.ok(text.includes(redirectUriOf(config.baseUrl, p.name)) || p.name === 'keycloak', `the page names ${redirectUriOf(config.baseUrl, p.name)}`);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('names the redirect URI pattern the service uses', () => {
    assert.equal(redirectUriOf('https://mandate.example.com', 'google'), 'https://mandate.example.com/api/oauth/google/callback');
    assert.ok(text.includes('<BASE_URL>/api/oauth/<name>/callback'));
  });
});
