import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { until } from '../../server/test/helpers/until.ts';
import { agentDir, BIN, type AgentDir } from './helpers/mcp-host.ts';

// How a host stops `mandate-agent mcp` over stdio while a tool call waits for the owner: it closes
// the server's stdin, or sends SIGTERM. Either way the process ends promptly with exit code 0, and
// writes nothing to stdout after the stop (a host may already read another server's output there).
// The host is this test, speaking raw JSON-RPC lines, so it decides exactly when stdin closes.

const PROMPTLY_MS = 3_000;

type RawServer = { stdout(): string; stderr(): string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; send(message: object): void; endStdin(): void; term(): void; kill(): void };

function rawStdioServer(dir: string): RawServer {
  const proc = spawn(process.execPath, [BIN, 'mcp', '--dir', dir, '--interval', '0.2'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '' } });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('close', (code, signal) => resolve({ code, signal })));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    send: (message) => proc.stdin.write(`${JSON.stringify(message)}\n`),
    endStdin: () => proc.stdin.end(),
    term: () => proc.kill('SIGTERM'),
    kill: () => proc.kill('SIGKILL'),
  };
}

describe('mandate-agent mcp over stdio: stopped while a call waits for the owner', { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let agent: AgentDir;
  const started: RawServer[] = [];

  before(async () => {
    server = await startServer({ name: 'mcp shutdown server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    agent = await agentDir(server, owner, 'Stopped bot');
  });

  after(async () => {
    for (const p of started) p.kill(); // a no-op for the ones that ended, as they should
    await server?.stop();
    agent?.remove();
  });

  /** A server whose host initialized it and then asked for access to `site`: the call waits for the owner. */
  async function waitingServer(site: string): Promise<RawServer> {
    const p = rawStdioServer(agent.dir);
    started.push(p);
    p.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw host', version: '1' } } });
    await until('the initialize answer', async () => (p.stdout().includes('"id":1') ? true : undefined));
    p.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    p.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'mandate_request_access', arguments: { site, scopes: ['list'] }, _meta: { progressToken: 'p1' } } });
    await until(`the card for ${site}`, async () => (await owner.pending()).find((c) => c.agent_id === agent.agentId && c.site === site));
    await until('a progress notification', async () => (p.stdout().includes('notifications/progress') ? true : undefined));
    return p;
  }

  async function assertStopped(p: RawServer, stop: () => void): Promise<void> {
    const before = p.stdout();
    const stoppedAt = Date.now();
    stop();
    const { code, signal } = await p.exited;
    const ms = Date.now() - stoppedAt;
    assert.equal(signal, null, p.stderr());
    assert.equal(code, 0, p.stderr());
    assert.ok(ms < PROMPTLY_MS, `ended after ${ms} ms`);
    assert.equal(p.stdout(), before, 'nothing on stdout after the stop');
    assert.doesNotMatch(before, /"id":2/, 'the waiting call never answered');
    assert.doesNotMatch(p.stderr(), /failed|Error/, p.stderr());
  }

  it('the host closes stdin: the process ends at once, exit code 0, nothing more on stdout', async () => {
    const p = await waitingServer('closed.stdin.test');
    await assertStopped(p, () => p.endStdin());
  });

  it('SIGTERM (stdin still open): the same', async () => {
    const p = await waitingServer('sigterm.test');
    await assertStopped(p, () => p.term());
  });
});
