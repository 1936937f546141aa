import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ensureBuilt } from '../../../scripts/build-if-stale.mjs';
import { testApp, signUp, json, expectStatus, type TestApp } from './helpers/app.ts';
import { ConfigError, parseConfig } from '../src/config/config.ts';
import { SdkTarballs } from '../src/downloads/sdk-tarballs.ts';

// The SDKs from the service itself (decisions §26): GET /download/agent and /download/site answer
// the tarballs `npm run build` made, and every command the service prints runs the agent tool from
// there (or from the registry package AGENT_PACKAGE names).

/** The names of the entries of a tar archive (ustar: a 512-byte header per entry, name at 0..100, prefix at 345..500). */
function tarEntries(tgz: Buffer): string[] {
  const tar = gunzipSync(tgz);
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, to: number) => header.subarray(from, to).toString('utf8').replace(/\0.*$/s, '');
    const prefix = field(345, 500);
    names.push(prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    const size = parseInt(field(124, 136).trim() || '0', 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

describe('SDK downloads', () => {
  let t: TestApp;
  before(async () => {
    // The tarballs come from the build: make them if missing or stale, as `npm start` does.
    ensureBuilt();
    t = await testApp();
  });
  after(() => t.close());

  for (const which of ['agent', 'site'] as const) {
    it(`GET /download/${which}: the npm tarball with @mandate/protocol inside, its digest and ETag`, async () => {
      const res = await t.app.inject({ method: 'GET', url: `/download/${which}` });
      expectStatus(res, 200);
      assert.equal(res.headers['content-type'], 'application/gzip');
      assert.match(String(res.headers['content-disposition']), new RegExp(`^attachment; filename="mandate-${which}-\\d+\\.\\d+\\.\\d+\\.tgz"$`));
      const body = res.rawPayload;
      assert.equal(Number(res.headers['content-length']), body.length);
      assert.equal(res.headers['content-digest'], `sha-256=:${createHash('sha256').update(body).digest('base64')}:`);
      const etag = String(res.headers['etag']);
      assert.match(etag, /^"[^"]+"$/);

      const entries = tarEntries(body);
      assert.ok(entries.includes('package/package.json'));
      assert.ok(entries.includes('package/node_modules/@mandate/protocol/package.json'), 'protocol is bundled');
      assert.ok(entries.includes('package/node_modules/@mandate/protocol/dist/index.js'), 'built protocol is bundled');
      assert.ok(entries.includes('package/dist/index.js'));
      if (which === 'agent') assert.ok(entries.includes('package/bin/mandate-agent.js'));

      const again = await t.app.inject({ method: 'GET', url: `/download/${which}`, headers: { 'if-none-match': etag } });
      expectStatus(again, 304);
      assert.equal(again.rawPayload.length, 0);
      assert.equal(again.headers['etag'], etag);
      expectStatus(await t.app.inject({ method: 'GET', url: `/download/${which}`, headers: { 'if-none-match': '"other"' } }), 200);
      expectStatus(await t.app.inject({ method: 'GET', url: `/download/${which}`, headers: { 'if-none-match': `"other", W/${etag}` } }), 304);

      const head = await t.app.inject({ method: 'HEAD', url: `/download/${which}` });
      expectStatus(head, 200);
      assert.equal(head.rawPayload.length, 0);
      assert.equal(head.headers['content-digest'], res.headers['content-digest']);
      assert.equal(head.headers['content-disposition'], res.headers['content-disposition']);
    });
  }

  it('a service whose build made no tarballs answers 404 saying how to build them', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'mandate-no-tarballs-'));
    const built = t.services.sdkTarballs;
    t.services.sdkTarballs = new SdkTarballs(empty);
    try {
      const res = await t.app.inject({ method: 'GET', url: '/download/agent' });
      expectStatus(res, 404);
      assert.match(json<{ detail: string }>(res).detail, /agent package was not built.*npm run build/);
    } finally {
      t.services.sdkTarballs = built;
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('are in the OpenAPI description', async () => {
    const paths = json<{ paths: Record<string, unknown> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' })).paths;
    for (const path of ['/download/agent', '/download/site', '/api/agent-tool']) assert.ok(paths[path], path);
  });

  it('the pairing code comes with the command that works on a fresh machine: the tool from this service', async () => {
    const owner = await signUp(t.app);
    const res = await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth, payload: {} });
    expectStatus(res, 200);
    const made = json<{ code: string; command: string }>(res);
    assert.equal(made.command, `npx --yes --package=http://localhost:8080/download/agent mandate-agent pair ${made.code} --service http://localhost:8080`);
    const tool = json(await t.app.inject({ method: 'GET', url: '/api/agent-tool' }));
    assert.deepEqual(tool, {
      base_url: 'http://localhost:8080',
      agent_package: null,
      package: 'http://localhost:8080/download/agent',
      run: 'npx --yes --package=http://localhost:8080/download/agent mandate-agent',
      install: 'npm install http://localhost:8080/download/agent',
    });
  });

  it('llms.txt, which agents read, gives the same commands and links the tarballs', async () => {
    const llms = (await t.app.inject({ method: 'GET', url: '/llms.txt' })).body;
    assert.ok(llms.includes('`npx --yes --package=http://localhost:8080/download/agent mandate-agent pair CODE --service http://localhost:8080`'), llms);
    assert.match(llms, /^- \[Agent SDK and tool\]\(http:\/\/localhost:8080\/download\/agent\)/m);
    assert.match(llms, /^- \[Site SDK\]\(http:\/\/localhost:8080\/download\/site\)/m);
  });
});

describe('AGENT_PACKAGE', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { BASE_URL: 'https://mandate.example', AGENT_PACKAGE: '@mandate/agent' } });
  });
  after(() => t.close());

  it('replaces the download in every command once the package is published', async () => {
    const owner = await signUp(t.app);
    const made = json<{ code: string; command: string }>(await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth, payload: {} }));
    assert.equal(made.command, `npx --yes --package=@mandate/agent mandate-agent pair ${made.code} --service https://mandate.example`);
    const tool = json(await t.app.inject({ method: 'GET', url: '/api/agent-tool' }));
    assert.deepEqual(tool, {
      base_url: 'https://mandate.example',
      agent_package: '@mandate/agent',
      package: '@mandate/agent',
      run: 'npx --yes --package=@mandate/agent mandate-agent',
      install: 'npm install @mandate/agent',
    });
  });

  it('in llms.txt too', async () => {
    const llms = (await t.app.inject({ method: 'GET', url: '/llms.txt' })).body;
    assert.ok(llms.includes('`npx --yes --package=@mandate/agent mandate-agent pair CODE --service https://mandate.example`'), llms);
  });

  it('is an npm package name, optionally with a version or tag; anything else stops the start', () => {
    for (const good of ['@mandate/agent', 'mandate-agent-tool', '@acme/agent@1.2.3', '@acme/agent@next']) assert.equal(parseConfig({ AGENT_PACKAGE: good }).agentPackage, good);
    assert.equal(parseConfig({}).agentPackage, null);
    assert.equal(parseConfig({ AGENT_PACKAGE: '' }).agentPackage, null);
    for (const bad of ['@Mandate/Agent', 'https://evil.example/agent.tgz', 'agent; rm -rf ~', '$(id)', '../agent', '@mandate/', 'a b', '@mandate/agent@1 || x', '.hidden', `a${'b'.repeat(214)}`]) {
      assert.throws(() => parseConfig({ AGENT_PACKAGE: bad }), (e: unknown) => e instanceof ConfigError && /AGENT_PACKAGE must be an npm package name/.test(e.message), bad);
    }
  });
});
