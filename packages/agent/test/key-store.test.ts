import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { AgentKey } from '../src/keys/agent-key.ts';
import { keyFilePath, loadKeyFile, saveKeyFile } from '../src/keys/key-file.ts';
import { ensurePrivateDir, readPrivateFile, writePrivateFileAtomic } from '../src/keys/secure-fs.ts';
import { KeyFileError } from '../src/client/errors.ts';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('key storage', () => {
  let root = '';
  let n = 0;
  const fresh = () => join(root, `d${n++}`);
  let oldUmask = 0;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'mandate-agent-keys-'));
    oldUmask = process.umask(0o022); // a common, permissive umask: our modes must not depend on it
  });
  after(() => {
    process.umask(oldUmask);
    rmSync(root, { recursive: true, force: true });
  });

  it('creates the directory with mode 0700, parents included', () => {
    const dir = join(fresh(), 'nested', 'agent');
    ensurePrivateDir(dir);
    assert.equal(mode(dir), 0o700);
  });

  it('refuses an existing directory that group or others may write to, or that is not a directory, and says how to fix it', () => {
    for (const open of [0o777, 0o770, 0o702, 0o720]) {
      const dir = fresh();
      ensurePrivateDir(dir);
      chmodSync(dir, open);
      assert.throws(() => writePrivateFileAtomic(join(dir, 'secret.json'), 'x'), (e: unknown) => {
        assert.ok(e instanceof KeyFileError);
        assert.match(e.message, /too open/);
        assert.match(inspect(e), new RegExp(`chmod 700 ${dir}`));
        return true;
      });
      assert.deepEqual(readdirSync(dir), [], 'nothing written');
    }
    const readable = fresh();
    ensurePrivateDir(readable);
    chmodSync(readable, 0o755); // readable by others: the files themselves are 0600
    writePrivateFileAtomic(join(readable, 'secret.json'), 'x');
    const notDir = join(fresh(), 'file');
    writePrivateFileAtomic(notDir, 'x');
    assert.throws(() => ensurePrivateDir(notDir), KeyFileError);
    // A symbolic link to a private directory is fine: the directory it leads to is checked.
    const target = fresh();
    ensurePrivateDir(target);
    const link = join(root, `link${n++}`);
    symlinkSync(target, link);
    writePrivateFileAtomic(join(link, 'secret.json'), 'x');
    chmodSync(target, 0o777);
    assert.throws(() => writePrivateFileAtomic(join(link, 'other.json'), 'x'), /too open/);
  });

  it('writes secret files with mode 0600, atomically, leaving no temporary file', () => {
    const dir = fresh();
    const file = join(dir, 'secret.json');
    writePrivateFileAtomic(file, 'one');
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(file), 0o600);
    // Replacing a file that had wider permissions gives a 0600 file, not the old mode.
    chmodSync(file, 0o644);
    writePrivateFileAtomic(file, 'two');
    assert.equal(mode(file), 0o600);
    assert.equal(readFileSync(file, 'utf8'), 'two');
    assert.deepEqual(readdirSync(dir), ['secret.json']);
  });

  it('replaces by rename: a reader holding the old file keeps reading the old content', () => {
    const dir = fresh();
    const file = join(dir, 'state.json');
    writePrivateFileAtomic(file, 'old');
    const inodeBefore = statSync(file).ino;
    writePrivateFileAtomic(file, 'new');
    assert.notEqual(statSync(file).ino, inodeBefore, 'a new file was renamed over the old one');
  });

  it('refuses to overwrite when asked to be exclusive', () => {
    const file = join(fresh(), 'key.json');
    writePrivateFileAtomic(file, 'first', { exclusive: true });
    assert.throws(() => writePrivateFileAtomic(file, 'second', { exclusive: true }), KeyFileError);
    assert.equal(readFileSync(file, 'utf8'), 'first');
  });

  for (const open of [0o644, 0o640, 0o604, 0o660, 0o606]) {
    it(`refuses to read a secret file with mode ${open.toString(8)}, saying how to fix it`, () => {
      const file = join(fresh(), 'key.json');
      writePrivateFileAtomic(file, '{}');
      chmodSync(file, open);
      assert.throws(() => readPrivateFile(file), (e: unknown) => {
        assert.ok(e instanceof KeyFileError);
        assert.match(e.detail, /too open/);
        assert.equal(e.nextStep, `chmod 600 ${file}`);
        return true;
      });
      chmodSync(file, 0o600);
      assert.equal(readPrivateFile(file), '{}');
    });
  }

  it('reads a missing file as undefined', () => {
    assert.equal(readPrivateFile(join(fresh(), 'nothing.json')), undefined);
  });

  it('saves and loads the key file; the private key never shows in JSON or inspect output', async () => {
    const dir = fresh();
    const key = await AgentKey.generate();
    saveKeyFile(dir, { serviceUrl: 'http://localhost:8080/', agentId: null, name: 'Bot', key, createdAt: '2025-01-01T00:00:00.000Z' }, { exclusive: true });
    assert.equal(mode(keyFilePath(dir)), 0o600);
    assert.equal(mode(dir), 0o700);
    const loaded = loadKeyFile(dir);
    assert.equal(loaded.serviceUrl, 'http://localhost:8080');
    assert.equal(loaded.agentId, null);
    assert.deepEqual(loaded.key.publicJwk, key.publicJwk);
    assert.equal(await loaded.key.thumbprint(), await key.thumbprint());
    const d = key.toPrivateJwk().d;
    assert.ok(!JSON.stringify(loaded.key).includes(d));
    assert.ok(!inspect(loaded.key, { depth: 5, showHidden: true }).includes(d));
    assert.ok(!JSON.stringify({ loaded }).includes(d));
  });

  it('refuses a world-readable key file when loading it', async () => {
    const dir = fresh();
    saveKeyFile(dir, { serviceUrl: 'http://localhost:8080', agentId: 'ag_abc', name: null, key: await AgentKey.generate(), createdAt: '' });
    chmodSync(keyFilePath(dir), 0o644);
    assert.throws(() => loadKeyFile(dir), (e: unknown) => e instanceof KeyFileError && /chmod 600/.test(e.nextStep ?? ''));
  });

  it('says to run init when there is no key', () => {
    assert.throws(() => loadKeyFile(fresh()), (e: unknown) => e instanceof KeyFileError && /mandate-agent init/.test(e.nextStep ?? ''));
  });

  it('refuses a key file whose public half does not belong to its private half', async () => {
    const dir = fresh();
    const a = (await AgentKey.generate()).toPrivateJwk();
    const b = (await AgentKey.generate()).toPrivateJwk();
    writePrivateFileAtomic(keyFilePath(dir), JSON.stringify({ version: 1, service_url: 'http://x.example', agent_id: null, name: null, private_jwk: { ...a, d: b.d } }));
    assert.throws(() => loadKeyFile(dir), /do not belong/);
  });

  it('refuses malformed key files with a clear message', () => {
    const cases: [string, RegExp][] = [
      ['not json', /not valid JSON/],
      ['{"version":2}', /version 1/],
      ['{"version":1,"service_url":"ftp://x","private_jwk":{}}', /http or https/],
      ['{"version":1,"service_url":"http://x.example","agent_id":"bob","private_jwk":{}}', /agent id/],
      ['{"version":1,"service_url":"http://x.example","private_jwk":{"kty":"EC"}}', /private key/],
    ];
    for (const [content, message] of cases) {
      const dir = fresh();
      writePrivateFileAtomic(keyFilePath(dir), content);
      assert.throws(() => loadKeyFile(dir), (e: unknown) => e instanceof KeyFileError && message.test(e.detail), content);
    }
  });

  it('does not let a group-readable directory weaken the file check', () => {
    const dir = fresh();
    ensurePrivateDir(dir);
    chmodSync(dir, 0o755);
    const file = join(dir, 'x.json');
    writeFileSync(file, 'x', { mode: 0o600 });
    assert.equal(readPrivateFile(file), 'x');
  });
});
