import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { JsonWebKey } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { verify } from 'web-bot-auth';
import { verifierFromJWK } from 'web-bot-auth/crypto';
import { runNode } from '../../server/test/helpers/child-process.ts';
import { docExamples, exampleProject, markedBlocks, typecheck } from '../../server/test/helpers/doc-examples.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { MandateAgent } from '../src/agent.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import { saveKeyFile } from '../src/keys/key-file.ts';
import { loadWbaKeyFile, wbaKeyFilePath } from '../src/keys/wba-key.ts';
import { sendToSite } from '../src/site-call.ts';
import type { Pass } from '../src/passes/pass-keeper.ts';

// Web Bot Auth in the SDK and the CLI against a real Mandate server process: the `wba setup` block of
// docs/agents/cli.md and the `sdk-wba.ts` example of docs/agents/sdk.md run as written, and what they
// sign verifies with Cloudflare's web-bot-auth verifier (keys read from the directory the service
// serves) and with the service's own POST /api/v1/check-agent.

const BIN = fileURLToPath(new URL('../bin/mandate-agent.js', import.meta.url));
type Json = Record<string, any>;

/** Cloudflare's verifier, given the Ed25519 keys of the directory at the request's Signature-Agent. */
async function verifyWithCloudflare(url: string, headers: Record<string, string>, directory: { keys: JsonWebKey[] }): Promise<string> {
  let keyid = '';
  await verify(new Request(url, { headers }), async (data, signature, params) => {
    const key = directory.keys.find((k) => (k as { kid?: string }).kid === params.keyid);
    assert.ok(key, `keyid ${params.keyid} is not in the directory`);
    keyid = params.keyid;
    await (await verifierFromJWK(key))(data, signature, params);
  });
  return keyid;
}

describe('Web Bot Auth in the agent SDK and CLI (docs/agents/cli.md, docs/agents/sdk.md)', { timeout: 240_000 }, () => {
  const cli = markedBlocks('docs/agents/cli.md');
  const [example] = docExamples('docs/agents/sdk.md').filter((e) => e.file === 'sdk-wba.ts');
  let server: ServerProcess;
  let owner: HttpOwner;
  let root = '';
  let project = '';

  async function agentDir(name: string): Promise<{ dir: string; agentId: string }> {
    const dir = join(root, name);
    const key = await AgentKey.generate();
    const agentId = await owner.createAgent(name, key.publicJwk);
    saveKeyFile(dir, { serviceUrl: server.url, agentId, name, key, createdAt: new Date().toISOString() });
    return { dir, agentId };
  }

  const directoryAt = async (address: string): Promise<{ keys: JsonWebKey[] }> => {
    const res = await fetch(address.replace(server.baseUrl, server.url));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/http-message-signatures-directory+json');
    return (await res.json()) as { keys: JsonWebKey[] };
  };

  const checkAgent = async (request: string): Promise<Json> => {
    const res = await fetch(`${server.url}/api/v1/check-agent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request }) });
    assert.equal(res.status, 200);
    return (await res.json()) as Json;
  };

  const pasted = (host: string, headers: Record<string, string>) => [`GET /products HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'mandate-agent-wba-'));
    assert.ok(example, 'docs/agents/sdk.md has the sdk-wba.ts example');
    project = exampleProject('mandate-agent-wba-project-', [example]);
    server = await startServer({ name: 'wba docs server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    mkdirSync(join(root, 'bin'));
    writeFileSync(join(root, 'bin', 'mandate-agent'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
  });
  after(async () => {
    await server?.stop();
    for (const d of [root, project]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('`mandate-agent wba setup` runs as written: prints the lines shown, keeps the key (0600), serves the signed directory', async () => {
    const { dir } = await agentDir('CLI bot');
    const script = cli.block('run', 'wba-setup');
    const shown = cli.block('shown', 'wba-setup').trim().split('\n').map((l) => l.split(':')[0]);
    const child = spawn('sh', ['-c', script], { env: { ...process.env, MANDATE_AGENT_DIR: dir, PATH: `${join(root, 'bin')}:${process.env['PATH'] ?? ''}` } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? -1)));
    assert.equal(code, 0, stderr);
    const lines = stdout.trim().split('\n');
    assert.deepEqual(lines.map((l) => l.split(':')[0]), shown, 'the same lines as the docs show');
    const address = (lines[0] ?? '').replace(/^Signature-Agent:\s+/, '');
    assert.match(address, new RegExp(`^${server.baseUrl}/wba/a-[0-9a-f]{12}$`));
    assert.equal(statSync(wbaKeyFilePath(dir)).mode & 0o777, 0o600);
    const file = loadWbaKeyFile(dir);
    assert.equal(file?.signatureAgent, address);
    assert.ok((file?.proofExpiresAt ?? 0) * 1000 > Date.now() + 3500_000, 'the directory signature\'s expiry is kept, so the next call renews only when due');
    const directory = await directoryAt(address);
    assert.deepEqual(directory.keys.map((k) => (k as { kid?: string }).kid), [file?.key.keyid]);
    // Rerun: the same key, the same address (the proof renewed).
    const again = await runNode('wba setup again', [BIN, 'wba', 'setup', '--json'], { env: { MANDATE_AGENT_DIR: dir } });
    assert.equal(await again.exited, 0, again.output());
    assert.deepEqual(JSON.parse(again.stdout()).keyid, file?.key.keyid);
    const bad = await runNode('wba nonsense', [BIN, 'wba', 'nonsense'], { env: { MANDATE_AGENT_DIR: dir } });
    assert.notEqual(await bad.exited, 0);
    assert.match(bad.output(), /usage: mandate-agent wba setup/);
  });

  it('sdk-wba.ts typechecks and runs; its headers verify with Cloudflare\'s verifier and with check-agent', async () => {
    assert.deepEqual(typecheck(project, ['sdk-wba.ts']), []);
    const { dir } = await agentDir('SDK bot');
    const child = runNode('sdk-wba.ts', ['--import', 'tsx', join(project, 'sdk-wba.ts')], { cwd: project, env: { MANDATE_AGENT_DIR: dir } });
    assert.equal(await child.exited, 0, child.output());
    const [first, second] = child.stdout().trim().split('\n');
    const address = /^Signature-Agent: (\S+) \(key (\S+)\)$/.exec(first ?? '')?.[1] ?? '';
    const headers = JSON.parse(second ?? '{}') as Record<string, string>;
    assert.deepEqual(Object.keys(headers).sort(), ['Signature', 'Signature-Agent', 'Signature-Input']);
    assert.equal(headers['Signature-Agent'], `"${address}"`);
    const directory = await directoryAt(address);
    assert.equal(await verifyWithCloudflare('https://shop.example/products', headers, directory), loadWbaKeyFile(dir)?.key.keyid);
    // Another host: Cloudflare's verifier refuses it (the signature covers @authority).
    await assert.rejects(verifyWithCloudflare('https://other.example/products', headers, directory));
    const checked = await checkAgent(pasted('shop.example', headers));
    assert.deepEqual([checked['outcome'], checked['ours'], checked['agent']], ['verified', true, address], checked['detail']);
    // The owner revokes the agent: the directory empties, and check-agent can no longer verify it.
    const agentId = (await MandateAgent.fromDirectory(dir)).agentId;
    await owner.flag(agentId, 'revoked');
    assert.deepEqual((await directoryAt(address)).keys, []);
    assert.equal((await checkAgent(pasted('shop.example', headers)))['outcome'], 'unverified');
  });

  it('agent.fetch signs every site request (a fresh signature per send), and Cloudflare verifies it', async () => {
    const { dir } = await agentDir('Fetch bot');
    const agent = MandateAgent.fromDirectory(dir);
    await assert.rejects(async () => agent.webBotAuthHeaders('https://shop.example/'), /not set up/);
    const setup = await agent.setupWebBotAuth();
    const seen: Headers[] = [];
    const capture = async (_url: string | URL | Request, init?: RequestInit) => {
      seen.push(new Headers(init?.headers));
      return new Response('ok');
    };
    const pass: Pass = { site: 'shop.example', accessToken: 'pass', expiresAt: Date.now() + 60_000, scope: ['list'], grantExpiresAt: null, grantUsesLeft: null, fetched: false };
    const sign = (u: string) => agent.webBotAuthHeaders(u);
    await sendToSite(capture, agent.key, 'https://shop.example/a', {}, pass, undefined, sign);
    await sendToSite(capture, agent.key, 'https://shop.example/a', {}, pass, undefined, sign);
    const [a, b] = seen.map((h) => Object.fromEntries(['signature-agent', 'signature-input', 'signature'].map((n) => [n, h.get(n) ?? ''])));
    assert.equal(a?.['signature-agent'], `"${setup.signatureAgent}"`);
    assert.notEqual(a?.['signature'], b?.['signature'], 'a fresh nonce each time');
    const directory = await directoryAt(setup.signatureAgent);
    assert.equal(await verifyWithCloudflare('https://shop.example/a', a as Record<string, string>, directory), setup.keyid);
  });
});
