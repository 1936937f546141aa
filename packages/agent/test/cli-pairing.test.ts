import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT, runNode } from '../../server/test/helpers/child-process.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { programFor, withProgram } from '../src/cli/invocation.ts';

// Pairing with the real `mandate-agent` bin against a real server: the owner makes a one-time code
// (as the owner app does), the CLI redeems it with its public key. No owner password anywhere.
// Then: the commands the CLI prints for the person work where it runs (a checkout, elsewhere, a
// global link), checked by running the printed line through a shell.

const BIN = fileURLToPath(new URL('../bin/mandate-agent.js', import.meta.url));

type Run = { code: number | null; stdout: string; stderr: string };
type PairingCode = { code: string; expires_at: string; name: string | null };

describe('mandate-agent pair', { timeout: 180_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let root = '';

  const cli = async (args: string[], opts: { cwd?: string; env?: Record<string, string>; bin?: string } = {}): Promise<Run> => {
    const child = runNode('mandate-agent', [opts.bin ?? BIN, ...args], { env: { MANDATE_AGENT_DIR: join(root, 'default-dir'), MANDATE_PASSWORD: '', MANDATE_URL: '', ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}) });
    const code = await child.exited;
    return { code, stdout: child.stdout(), stderr: child.stderr() };
  };
  const expectCode = (r: Run, code: number) => assert.equal(r.code, code, `exit ${r.code}, expected ${code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const newCode = (name?: string) => owner.ok<PairingCode>('POST', '/api/agents/pairing-codes', name ? { name } : {});
  const keyFile = (dir: string) => JSON.parse(readFileSync(join(dir, 'key.json'), 'utf8')) as { agent_id: string | null; name: string | null; private_jwk: { d: string } };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'mandate-agent-pair-'));
    server = await startServer({ name: 'pairing cli server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
  });

  after(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('pair CODE makes the key, registers it under the owner with the owner\'s name, and records the id', async () => {
    const dir = join(root, 'paired');
    const { code } = await newCode('Paired bot');
    const r = await cli(['pair', code.toLowerCase(), '--service', server.url, '--dir', dir, '--json']);
    expectCode(r, 0);
    const out = JSON.parse(r.stdout) as { agent_id: string; name: string; registered: boolean; public_jwk: { d?: string } };
    assert.match(out.agent_id, /^ag_/);
    assert.equal(out.name, 'Paired bot');
    assert.equal(out.registered, true);
    assert.equal(out.public_jwk.d, undefined);
    assert.equal(keyFile(dir).agent_id, out.agent_id);
    assert.equal(keyFile(dir).name, 'Paired bot');
    const agents = await owner.ok<{ id: string; name: string }[]>('GET', '/api/agents');
    assert.ok(agents.some((a) => a.id === out.agent_id && a.name === 'Paired bot'));
    // The service accepts the key as that agent.
    expectCode(await cli(['status', '--dir', dir]), 0);
    for (const text of [r.stdout, r.stderr]) assert.doesNotMatch(text, new RegExp(owner.password));
    assert.doesNotMatch(r.stderr, /password/i);

    // A registered key is never replaced.
    const again = await cli(['pair', (await newCode()).code, '--service', server.url, '--dir', dir]);
    expectCode(again, 2);
    assert.match(again.stderr, /already holds the key of agent/);
  });

  it('a used code is refused (exit 1, what to do next), the key is kept, and a new code pairs it', async () => {
    const dir = join(root, 'retry');
    const first = await newCode();
    expectCode(await cli(['pair', first.code, '--service', server.url, '--dir', join(root, 'first'), '--name', 'First']), 0);
    const used = await cli(['pair', first.code, '--service', server.url, '--dir', dir, '--name', 'Second']);
    expectCode(used, 1);
    assert.match(used.stderr, /unknown, used or expired pairing code/);
    assert.match(used.stderr, /next step: ask the owner for a new code/);
    assert.match(used.stderr, /mandate-agent pair CODE --service/);
    const kept = keyFile(dir);
    assert.equal(kept.agent_id, null);

    // A mistyped code never reaches the service.
    const typo = await cli(['pair', 'K7QM-3XW', '--dir', dir]);
    expectCode(typo, 2);
    assert.match(typo.stderr, /not a pairing code/);

    // The unregistered key names its service: no --service needed the second time. No owner name: the agent's.
    const second = await cli(['pair', (await newCode()).code, '--dir', dir, '--json']);
    expectCode(second, 0);
    const out = JSON.parse(second.stdout) as { agent_id: string; name: string };
    assert.equal(out.name, 'Second');
    assert.equal(keyFile(dir).private_jwk.d, kept.private_jwk.d, 'the key of the failed attempt was reused');
  });

  it('init --code does the same in one step', async () => {
    const dir = join(root, 'init-code');
    const r = await cli(['init', '--service', server.url, '--code', (await newCode('Init bot')).code, '--dir', dir]);
    expectCode(r, 0);
    assert.match(r.stdout, /Paired: agent ag_[a-z0-9]+ \("Init bot"\)/);
    assert.match(r.stdout, /Next: npx mandate-agent request --site SITE --scopes SCOPES --wait --dir /);
    expectCode(await cli(['init', '--service', server.url, '--code', 'nope', '--dir', join(root, 'bad')]), 2);
  });

  it('prints commands as they run here: npx in a checkout, node <path> elsewhere, mandate-agent when linked on PATH', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'mandate-agent-elsewhere-'));
    const linkDir = join(root, 'global-bin');
    mkdirSync(linkDir);
    symlinkSync(BIN, join(linkDir, 'mandate-agent'));
    const cases: { what: string; cwd: string; env: Record<string, string>; bin: string; program: string }[] = [
      { what: 'in the checkout', cwd: REPO_ROOT, env: {}, bin: BIN, program: 'npx mandate-agent' },
      { what: 'outside it', cwd: elsewhere, env: {}, bin: BIN, program: `node ${BIN}` },
      { what: 'linked on PATH', cwd: elsewhere, env: { PATH: `${linkDir}${delimiter}${process.env['PATH'] ?? ''}` }, bin: join(linkDir, 'mandate-agent'), program: 'mandate-agent' },
    ];
    try {
      for (const [i, c] of cases.entries()) {
        const dir = join(root, `printed-${i}`);
        const init = await cli(['init', '--service', server.url, '--name', `printed ${i}`, '--dir', dir], c);
        expectCode(init, 0);
        const setIdLine = init.stdout.split('\n').map((l) => l.trim()).find((l) => l.includes(' set-id ag_...')) ?? '';
        assert.ok(setIdLine.startsWith(`${c.program} set-id ag_... --dir `), `${c.what}: ${setIdLine}`);
        // The owner registers the key; the printed line, with the real id, runs in a shell right there.
        const jwk = JSON.parse(init.stdout.split('\n').find((l) => l.startsWith('{"kty"')) ?? '{}') as Record<string, string>;
        const id = await owner.createAgent(`printed ${i}`, jwk);
        const ran = await shell(setIdLine.replace('ag_...', id), c.cwd, { ...process.env, ...c.env, MANDATE_URL: '' });
        assert.equal(ran.code, 0, `${c.what}: ${setIdLine}\n${ran.stderr}`);
        assert.match(ran.stdout, new RegExp(`Agent id recorded: ${id}`));
        // Error hints too: a missing key says how to run init, in the same form.
        const noKey = await cli(['status', '--dir', join(root, `missing-${i}`)], c);
        expectCode(noKey, 2);
        assert.match(noKey.stderr, new RegExp(`run: ${escape(c.program)} init --service URL`));
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    assert.ok(existsSync(join(root, 'printed-2', 'key.json')));
  });

  it('run by npx from the service (the line the owner app prints), prints that same npx line', () => {
    // Where npx keeps what it fetched, and what npm tells the program it runs.
    const cache = mkdtempSync(join(tmpdir(), 'mandate-npx-cache-'));
    try {
      const script = join(cache, '_npx', '4060f5d6d2ec3648', 'node_modules', '@mandate', 'agent', 'bin', 'mandate-agent.js');
      mkdirSync(join(script, '..'), { recursive: true });
      writeFileSync(script, '');
      const spec = 'http://localhost:8080/download/agent';
      const program = programFor(script, { PATH: '', npm_config_package: spec }, tmpdir());
      assert.equal(program, `npx --yes --package=${spec} mandate-agent`);
      assert.equal(programFor(script, { PATH: '', npm_config_package: '@mandate/agent' }, tmpdir()), 'npx --yes --package=@mandate/agent mandate-agent');
      // Not from npx's cache, or no package named: the other rules.
      assert.equal(programFor(script, { PATH: '' }, join(cache, '_npx')), `node ${join('4060f5d6d2ec3648', 'node_modules', '@mandate', 'agent', 'bin', 'mandate-agent.js')}`);
      assert.equal(programFor(BIN, { PATH: '', npm_config_package: spec }, REPO_ROOT), 'npx mandate-agent');
      // Its messages name it that way, once.
      assert.equal(withProgram(`run: mandate-agent pair CODE; or ${program} whoami`, program), `run: ${program} pair CODE; or ${program} whoami`);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('rewrites only whole mandate-agent commands', () => {
    assert.equal(withProgram('run: mandate-agent init --x; see mandate-agent --help', 'npx mandate-agent'), 'run: npx mandate-agent init --x; see npx mandate-agent --help');
    assert.equal(withProgram('if no other mandate-agent process runs', 'npx mandate-agent'), 'if no other mandate-agent process runs');
    assert.equal(withProgram('npx mandate-agent wait t_1', 'npx mandate-agent'), 'npx mandate-agent wait t_1');
    assert.equal(withProgram('(mandate-agent whoami shows it)', 'node /x/m.js'), '(node /x/m.js whoami shows it)');
    assert.equal(withProgram('mandate-agent-ish init', 'npx mandate-agent'), 'mandate-agent-ish init');
  });
});

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function shell(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', line], { cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
