import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { SoftAuthenticator } from '../helpers/soft-authenticator.ts';

// Proves the quickstart guides: the real server, the example site and the example agent as their own
// processes, exactly as the guides run them; this test plays the owner over HTTP (sign-up, passkey,
// agent creation, approving the access request and the step-up on the "phone").

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

interface Child {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  running(): boolean;
}

const children: Child[] = [];
const killAll = () => {
  for (const c of children) if (c.running()) c.proc.kill('SIGKILL');
};

/** Runs `examples/quickstart/<script>` with `node --import tsx` from the repository root, as the guides do. */
function runExample(script: string, args: string[], env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', `examples/quickstart/${script}`, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = { proc, output: () => out, exited, running: () => proc.exitCode === null && proc.signalCode === null };
  children.push(child);
  return child;
}

async function stopChild(c: Child): Promise<void> {
  if (!c.running()) return;
  c.proc.kill('SIGTERM');
  await Promise.race([c.exited, new Promise((r) => setTimeout(r, 3000))]);
  if (c.running()) c.proc.kill('SIGKILL');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, ms: number, check: () => boolean, logs: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${logs()}`);
    await sleep(50);
  }
}

describe('quickstart guides, end to end', () => {
  let server: ServerProcess;
  let site: Child;
  let dir = '';
  let auth: Record<string, string> = {};
  let authenticator: SoftAuthenticator;
  let agentId = '';
  let keyFile = '';
  let siteUrl = '';

  const logs = () => [`--- server\n${server?.logs() ?? ''}`, ...children.map((c, i) => `--- child ${i}\n${c.output()}`)].join('\n');

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  async function ok(method: string, path: string, body?: unknown): Promise<Record<string, any>> {
    const r = await call(method, path, body);
    assert.equal(r.status, 200, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-quickstart-'));
    process.once('exit', killAll);
    server = await startServer({ name: 'quickstart server' });

    // The owner: signs up, registers a passkey ("phone").
    const signedUp = await ok('POST', '/api/users', { email: `quick-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery' });
    auth = { authorization: `Bearer ${String(signedUp.session_token)}` };
    authenticator = new SoftAuthenticator({ origin: server.baseUrl });
    const { challenge, options } = await ok('GET', '/api/webauthn/register/options');
    await ok('POST', '/api/webauthn/register/verify', { challenge, attestation: authenticator.register(options) });

    // The agent developer makes a key pair (agent-quickstart.md step 1) ...
    keyFile = join(dir, 'agent-key.json');
    const keygen = runExample('keygen.ts', [keyFile]);
    assert.equal(await keygen.exited, 0, keygen.output());
    const publicJwk = JSON.parse(keygen.output().trim().split('\n').at(-1) ?? '') as Record<string, string>;
    assert.equal(publicJwk.d, undefined, 'only the public key is printed');
    assert.equal(JSON.parse(readFileSync(keyFile, 'utf8')).d !== undefined, true, 'the private key is kept in the file');

    // ... and the owner creates the agent with the public key (step 2).
    agentId = String((await ok('POST', '/api/agents', { name: 'Quickstart agent', jwk: publicJwk })).id);

    // The site (site-quickstart.md), verifying in cloud mode against this server.
    const port = await freePort();
    siteUrl = `http://127.0.0.1:${port}`;
    site = runExample('site.ts', [], { MANDATE_URL: server.url, PORT: String(port), HOST: '127.0.0.1', SITE_ID: `127.0.0.1:${port}`, PUBLIC_BASE_URL: siteUrl });
    await waitFor('the site to listen', 30_000, () => site.output().includes('listening on'), logs);
  });

  after(async () => {
    for (const c of children) await stopChild(c);
    process.removeListener('exit', killAll);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the agent gets access, lists, is refused payment without a step-up and pays with one', { timeout: 90_000 }, async () => {
    const agent = runExample('agent.ts', [server.url, agentId, keyFile, siteUrl]);

    // The owner's phone: approve each request of this agent as it arrives, with the passkey.
    const approved: { kind: string; agentOutputThen: string }[] = [];
    const seen = new Set<string>();
    const deadline = Date.now() + 80_000;
    while (agent.running()) {
      assert.ok(Date.now() < deadline, `the agent did not finish:\n${logs()}`);
      const me = await ok('GET', '/api/me');
      for (const p of me.pending as { id: string; kind: string; agent_id: string; scopes: string[]; action?: string }[]) {
        if (p.agent_id !== agentId || seen.has(p.id)) continue;
        seen.add(p.id);
        const agentOutputThen = agent.output();
        const { options } = await ok('GET', `/api/txn/${p.id}/assertion-options`);
        await ok('POST', `/api/txn/${p.id}/response`, { approve: true, assertion: authenticator.assert(options) });
        approved.push({ kind: p.kind, agentOutputThen });
        if (p.kind === 'initial') assert.deepEqual(p.scopes, ['list', 'pay']);
        if (p.kind === 'stepup') assert.equal(p.action, 'pay order 42');
      }
      await sleep(100);
    }
    const out = agent.output();
    assert.equal(await agent.exited, 0, logs());
    assert.deepEqual(approved.map((a) => a.kind), ['initial', 'stepup'], logs());

    // Listing with the pass, before and after a refresh.
    assert.match(out, /approved: scopes list pay/);
    assert.equal(out.match(/GET \/listings -> 200 \{"listings":\[/g)?.length, 2, out);
    assert.match(out, /pass refreshed/);

    // The payment: refused without a step-up, and that refusal came before the owner was asked.
    const refused = 'POST /orders/42/pay -> 403 {"error":"stepup_required"}';
    assert.ok(out.includes(refused), out);
    const stepupApproval = approved[1]?.agentOutputThen ?? '';
    assert.ok(stepupApproval.includes(refused), 'the step-up was asked for after the refusal');
    assert.ok(!stepupApproval.includes('POST /orders/42/pay -> 200'), 'nothing was paid before the step-up was approved');
    assert.match(out, /POST \/orders\/42\/pay -> 200 \{"order":"42","paid":"19.90 EUR"\}/);
    assert.ok(out.indexOf(refused) < out.indexOf('POST /orders/42/pay -> 200'));
    assert.equal(site.running(), true, site.output());
  });

  it('the site refuses unverified requests, and every request while Mandate is unreachable', { timeout: 60_000 }, async () => {
    const status = async (base: string, method: string, path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(base + path, { method, headers });
      return `${res.status} ${await res.text()}`;
    };
    assert.equal(await status(siteUrl, 'GET', '/listings'), '401 {"error":"invalid_request"}');
    const forged = { authorization: 'Bearer not.a.pass', dpop: 'not.a.proof' };
    assert.equal(await status(siteUrl, 'GET', '/listings', forged), '401 {"error":"invalid_token"}');
    assert.equal(await status(siteUrl, 'POST', '/orders/7/pay', forged), '404 {"error":"no such order"}');

    const port = await freePort();
    const nowhere = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const cut = runExample('site.ts', [], { MANDATE_URL: nowhere, PORT: String(port), HOST: '127.0.0.1', SITE_ID: `127.0.0.1:${port}` });
    await waitFor('the second site to listen', 30_000, () => cut.output().includes('listening on'), logs);
    assert.equal(await status(`http://127.0.0.1:${port}`, 'GET', '/listings', forged), '503 {"error":"verification_unavailable"}');
    await stopChild(cut);
  });

  it('the guides quote the example files as they are', () => {
    // Every code block preceded by `<!-- from examples/quickstart/<file> -->` must appear in that file verbatim.
    let quoted = 0;
    for (const guide of ['docs/agent-quickstart.md', 'docs/site-quickstart.md']) {
      const text = readFileSync(join(ROOT, guide), 'utf8');
      for (const m of text.matchAll(/<!-- from (examples\/quickstart\/[\w.-]+) -->\n```\w*\n([\s\S]*?)```/g)) {
        const [, file = '', code = ''] = m;
        assert.ok(readFileSync(join(ROOT, file), 'utf8').includes(code), `${guide}: a block differs from ${file}:\n${code}`);
        quoted++;
      }
    }
    assert.ok(quoted >= 8, `only ${quoted} quoted blocks`);
  });
});
