import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { buildWordpress, pluginFiles, pluginVersion, PLUGIN_DIR } from '../../../scripts/build-wordpress.mjs';
import { testApp, json, expectStatus, type TestApp } from './helpers/app.ts';
import { REPO_ROOT } from './helpers/child-process.ts';
import { WordpressZips, newestZipName } from '../src/downloads/wordpress-zip.ts';

// The WordPress plugin from the service itself (decisions §23): `npm run build` zips
// integrations/wordpress, versioned from its plugin header, and GET /download/wordpress serves the
// newest zip. Every PHP file of the plugin passes `php -l` (test:setup installs PHP).

/** The entries of a zip, read from its central directory, each inflated: name → bytes. */
function unzip(zip: Buffer): Map<string, Buffer> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(end >= 0, 'an end of central directory record');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, 'a central directory header');
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataAt, dataAt + size);
    entries.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data));
    at += 46 + nameLength + extra;
  }
  return entries;
}

describe('WordPress plugin download', () => {
  let t: TestApp;
  before(async () => {
    buildWordpress();
    t = await testApp();
  });
  after(() => t.close());

  it('GET /download/wordpress: the zip of integrations/wordpress under mandate/, named after the header\'s version, with digest and ETag', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/download/wordpress' });
    expectStatus(res, 200);
    assert.equal(res.headers['content-type'], 'application/zip');
    const version = pluginVersion();
    assert.equal(res.headers['content-disposition'], `attachment; filename="mandate-wordpress-${version}.zip"`);
    const body = res.rawPayload;
    assert.equal(res.headers['content-digest'], `sha-256=:${createHash('sha256').update(body).digest('base64')}:`);
    const files = unzip(body);
    assert.deepEqual([...files.keys()].sort(), pluginFiles().map((f) => `mandate/${f}`).sort());
    for (const f of pluginFiles()) assert.ok(files.get(`mandate/${f}`)?.equals(readFileSync(join(REPO_ROOT, PLUGIN_DIR, f))), `mandate/${f} is the repository's file`);
    assert.match(files.get('mandate/mandate.php')?.toString() ?? '', /Plugin Name:\s+Mandate[\s\S]*Requires PHP:\s+8\.1/);

    const again = await t.app.inject({ method: 'GET', url: '/download/wordpress', headers: { 'if-none-match': String(res.headers['etag']) } });
    expectStatus(again, 304);
    const head = await t.app.inject({ method: 'HEAD', url: '/download/wordpress' });
    expectStatus(head, 200);
    assert.equal(head.headers['content-type'], 'application/zip');
  });

  it('the build makes the same bytes from the same files', () => {
    const first = readFileSync(join(REPO_ROOT, 'packages/server/dist/wordpress', buildWordpress().file));
    const second = readFileSync(join(REPO_ROOT, 'packages/server/dist/wordpress', buildWordpress().file));
    assert.ok(first.equals(second));
  });

  it('serves the newest version (numerically) of the zips there; 404 saying how to build when there is none', async () => {
    assert.equal(newestZipName(['mandate-wordpress-0.9.0.zip', 'mandate-wordpress-0.10.0.zip', 'mandate-wordpress-0.9.9.zip', 'other.zip', 'mandate-wordpress-1.0.0.zip.partial-1']), 'mandate-wordpress-0.10.0.zip');
    const dir = mkdtempSync(join(tmpdir(), 'mandate-wp-zips-'));
    const built = t.services.wordpressZips;
    try {
      t.services.wordpressZips = new WordpressZips(dir);
      const none = await t.app.inject({ method: 'GET', url: '/download/wordpress' });
      expectStatus(none, 404);
      assert.match(json<{ detail: string }>(none).detail, /WordPress plugin was not built.*npm run build/);

      writeFileSync(join(dir, 'mandate-wordpress-1.2.9.zip'), 'old');
      writeFileSync(join(dir, 'mandate-wordpress-1.10.0.zip'), 'new');
      t.services.wordpressZips = new WordpressZips(dir);
      const res = await t.app.inject({ method: 'GET', url: '/download/wordpress' });
      expectStatus(res, 200);
      assert.equal(res.headers['content-disposition'], 'attachment; filename="mandate-wordpress-1.10.0.zip"');
      assert.equal(res.body, 'new');
    } finally {
      t.services.wordpressZips = built;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is in the OpenAPI description', async () => {
    const paths = json<{ paths: Record<string, { get?: { summary?: string } }> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' })).paths;
    assert.ok(paths['/download/wordpress']?.get?.summary);
  });

  it('every PHP file of the plugin passes php -l (PHP from npm run test:setup)', () => {
    const php = pluginFiles().filter((f) => f.endsWith('.php'));
    assert.ok(php.length >= 5, php.join(', '));
    for (const f of php) {
      const r = spawnSync('php', ['-l', join(REPO_ROOT, PLUGIN_DIR, f)], { encoding: 'utf8' });
      assert.equal(r.error, undefined, `php is missing: run npm run test:setup (${String(r.error)})`);
      assert.equal(r.status, 0, `${f}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /No syntax errors detected/);
    }
  });
});
