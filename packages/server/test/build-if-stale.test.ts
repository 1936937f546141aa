import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGES, staleBuilds } from '../../../scripts/build-if-stale.mjs';
import { DOWNLOADS_DIR, downloadsStale } from '../../../scripts/build-downloads.mjs';

// `npm start` and the process tests build first when a build is missing or older than its inputs
// (scripts/build-if-stale.mjs). Checked on a made-up repository, so the real build is left alone.

describe('build-if-stale: which builds are out of date', () => {
  const root = `${mkdtempSync(join(tmpdir(), 'mandate-stale-'))}/`;
  after(() => rmSync(root, { recursive: true, force: true }));
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);
  const file = (path: string, seconds: number) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), '');
    at(path, seconds);
  };

  file('tsconfig.base.json', 100);
  for (const name of PACKAGES) {
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src/index.ts', 'src/deep/inner/file.ts']) file(`packages/${name}/${f}`, 100);
  }

  it('every package is stale before its first build', () => {
    assert.deepEqual(staleBuilds(root), [...PACKAGES]);
  });

  it('none once each build is newer than its inputs', () => {
    for (const name of PACKAGES) file(`packages/${name}/dist/.tsbuildinfo`, 200);
    assert.deepEqual(staleBuilds(root), []);
  });

  it('a source edited after the build, however deep, makes that package stale', () => {
    at('packages/web/src/deep/inner/file.ts', 300);
    assert.deepEqual(staleBuilds(root), ['web']);
    at('packages/web/src/deep/inner/file.ts', 100);
  });

  it('so do its package.json and tsconfigs; the shared base config makes every package stale', () => {
    at('packages/agent/tsconfig.build.json', 300);
    assert.deepEqual(staleBuilds(root), ['agent']);
    at('packages/agent/tsconfig.build.json', 100);
    at('packages/site/package.json', 300);
    assert.deepEqual(staleBuilds(root), ['site']);
    at('packages/site/package.json', 100);
    at('tsconfig.base.json', 300);
    assert.deepEqual(staleBuilds(root), [...PACKAGES]);
    at('tsconfig.base.json', 100);
  });

  it('a removed build is stale again', () => {
    rmSync(join(root, 'packages/server/dist'), { recursive: true });
    assert.deepEqual(staleBuilds(root), ['server']);
  });
});

describe('build-if-stale: the SDK tarballs the service offers', () => {
  const root = `${mkdtempSync(join(tmpdir(), 'mandate-stale-downloads-'))}/`;
  after(() => rmSync(root, { recursive: true, force: true }));
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);
  const file = (path: string, seconds: number) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), '');
    at(path, seconds);
  };
  for (const name of ['protocol', 'agent', 'site']) {
    for (const f of ['package.json', 'README.md', 'dist/.tsbuildinfo']) file(`packages/${name}/${f}`, 100);
  }

  it('are stale until the build made them (a fresh clone: npm start makes them)', () => {
    assert.equal(downloadsStale(root), true);
    file(`${DOWNLOADS_DIR}/index.json`, 200);
    assert.equal(downloadsStale(root), false);
  });

  it('and again once a package they hold is rebuilt or its manifest or README changes', () => {
    for (const path of ['packages/protocol/dist/.tsbuildinfo', 'packages/agent/package.json', 'packages/site/README.md']) {
      at(path, 300);
      assert.equal(downloadsStale(root), true, path);
      at(path, 100);
    }
    assert.equal(downloadsStale(root), false);
  });

  it('a service package rebuilt alone leaves them current', () => {
    file('packages/server/dist/.tsbuildinfo', 300);
    assert.equal(downloadsStale(root), false);
  });
});
