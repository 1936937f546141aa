import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError, KeyFileError, StateLockedError } from '../src/client/errors.ts';
import { FileStateStore } from '../src/state/file-state-store.ts';
import { withFileLock } from '../src/state/file-lock.ts';
import { MemoryStateStore } from '../src/state/memory-state-store.ts';
import type { SiteState } from '../src/state/state-store.ts';

const state = (site: string, n: number): SiteState => ({
  agentId: 'ag_test', site, accessToken: `pass-${n}`, issuedAt: 1000, expiresAt: 601_000, refreshToken: `refresh-${n}`, scope: ['list'], grantExpiresAt: null, grantUsesLeft: null,
});

describe('state stores', () => {
  let root = '';
  let n = 0;
  const fresh = () => join(root, `d${n++}`);
  const freshDir = () => {
    const d = fresh();
    mkdirSync(d);
    return d;
  };
  before(() => (root = mkdtempSync(join(tmpdir(), 'mandate-agent-state-'))));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('keeps one 0600 file per site in a 0700 directory; a new store instance reads it back', async () => {
    const dir = fresh();
    await new FileStateStore(dir).write(state('shop.example', 1));
    await new FileStateStore(dir).write(state('localhost:3000', 2));
    const again = new FileStateStore(dir);
    assert.equal((await again.read('shop.example'))?.refreshToken, 'refresh-1');
    assert.equal((await again.read('localhost:3000'))?.refreshToken, 'refresh-2');
    assert.equal(statSync(join(dir, 'state')).mode & 0o777, 0o700);
    for (const f of readdirSync(join(dir, 'state'))) assert.equal(statSync(join(dir, 'state', f)).mode & 0o777, 0o600, f);
    await again.remove('shop.example');
    assert.equal(await again.read('shop.example'), undefined);
    assert.equal((await again.read('localhost:3000'))?.refreshToken, 'refresh-2');
  });

  it('refuses site ids that are not host names (no path can escape the directory)', async () => {
    const store = new FileStateStore(fresh());
    for (const bad of ['../key', '..', 'a/b', '', 'shop.example/', '.hidden', 'x:99999']) {
      await assert.rejects(store.read(bad), InvalidInputError, bad);
    }
  });

  it('refuses a state file others can read, and a malformed one', async () => {
    const dir = fresh();
    const store = new FileStateStore(dir);
    await store.write(state('shop.example', 1));
    chmodSync(join(dir, 'state', 'shop.example.json'), 0o644);
    await assert.rejects(store.read('shop.example'), KeyFileError);
    writeFileSync(join(dir, 'state', 'other.example.json'), '{"version":1,"state":{"site":"x"}}', { mode: 0o600 });
    await assert.rejects(store.read('other.example'), KeyFileError);
  });

  it('runs locked sections for one site one at a time, and different sites in parallel', async () => {
    for (const store of [new FileStateStore(fresh()), new MemoryStateStore()]) {
      const log: string[] = [];
      const section = (name: string, site: string) => store.withLock(site, async () => {
        log.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 30));
        log.push(`${name}-`);
      });
      await Promise.all([section('a', 'shop.example'), section('b', 'shop.example'), section('c', 'other.example')]);
      const a = log.indexOf('a+');
      const b = log.indexOf('b+');
      const [first, second] = a < b ? ['a', 'b'] : ['b', 'a'];
      assert.ok(log.indexOf(`${first}-`) < log.indexOf(`${second}+`), `sections overlapped: ${log.join(' ')}`);
      assert.ok(log.indexOf('c+') < log.indexOf(`${second}-`), `another site waited: ${log.join(' ')}`);
    }
  });

  it('serialises two processes working on the same site', async () => {
    const dir = freshDir();
    const storeUrl = new URL('../src/state/file-state-store.ts', import.meta.url).href;
    const marks = join(dir, 'marks.txt');
    const script = `
      import { appendFileSync } from 'node:fs';
      import { FileStateStore } from ${JSON.stringify(storeUrl)};
      await new FileStateStore(${JSON.stringify(dir)}).withLock('shop.example', async () => {
        appendFileSync(${JSON.stringify(marks)}, 'child+\\n');
        process.stdout.write('locked');
        await new Promise((r) => setTimeout(r, 400));
        appendFileSync(${JSON.stringify(marks)}, 'child-\\n');
      });`;
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => child.once('exit', r));
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before it held the lock`)));
    });
    const { appendFileSync, readFileSync } = await import('node:fs');
    await new FileStateStore(dir).withLock('shop.example', async () => appendFileSync(marks, 'parent\n'));
    await exited;
    assert.equal(readFileSync(marks, 'utf8'), 'child+\nchild-\nparent\n');
  });

  it('releases the lock when the section throws', async () => {
    const dir = fresh();
    const store = new FileStateStore(dir);
    await assert.rejects(store.withLock('shop.example', async () => { throw new Error('boom'); }), /boom/);
    assert.equal(existsSync(join(dir, 'state', 'shop.example.lock')), false);
    assert.equal(await store.withLock('shop.example', async () => 42), 42);
  });

  it('takes over a lock left by a process that died, and waits for a live holder', async () => {
    const dir = freshDir();
    const lock = join(dir, 'x.lock');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(lock, `${dead} abc`, { mode: 0o600 });
    assert.equal(await withFileLock(lock, async () => 'ran'), 'ran');
    assert.equal(existsSync(lock), false);

    // Held by a live process (this one, under another token): the caller times out instead of barging in.
    writeFileSync(lock, `${process.pid} someone-else`, { mode: 0o600 });
    await assert.rejects(withFileLock(lock, async () => 'ran', { timeoutMs: 200 }), StateLockedError);
    assert.equal(existsSync(lock), true, 'the other holder\'s lock is left alone');
  });

  it('treats a very old lock as stale', async () => {
    const dir = freshDir();
    const lock = join(dir, 'old.lock');
    writeFileSync(lock, `${process.pid} old`, { mode: 0o600 });
    const { utimesSync } = await import('node:fs');
    utimesSync(lock, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    assert.equal(await withFileLock(lock, async () => 'ran', { staleMs: 60_000 }), 'ran');
  });
});
