import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { runNode, type Child } from '../../server/test/helpers/child-process.ts';
import { markedBlocks } from '../../server/test/helpers/doc-examples.ts';
import { freshMachine, showShellRun, type FreshMachine } from '../../server/test/helpers/fresh-machine.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { until } from '../../server/test/helpers/until.ts';
import { claudeMcpAdd, configEntry, documentedTools, httpEntry, shellWords, stdioEntry, type DocumentedTool, type HttpEntry, type StdioEntry } from './helpers/mcp-guide.ts';

// docs/agents/mcp.md cannot rot: every block it shows runs here, as its reader would run it, on a
// machine with Node and npm alone (an empty folder, a HOME and an npm cache of its own, any
// @mandate/* asked of a registry failing): the pair command pairs with a real owner's one-time
// code, downloading the tool from the running service (the one npx install of this file; every
// later start uses that npm cache, as a reader's host does); each host's config (Claude Desktop,
// VS Code, `claude mcp add ... -- <command>`) is read as the host reads it and its command started
// with the MCP SDK's StdioClientTransport, as a host starts it; the --http commands start the
// server and the HTTP configs reach it with their URL and header. The guide's placeholders are
// replaced with this run's: the service's address for http://localhost:8080, the real code, the
// machine's home for /home/you, free ports. Each server's tool list must be the guide's table of
// tools, names and inputs, so the table cannot drift from the code.

const GUIDE = 'docs/agents/mcp.md';
const PLACEHOLDER_URL = 'http://localhost:8080';
const PLACEHOLDER_CODE = 'K7QM-3XWP';
const PLACEHOLDER_HOME = '/home/you';
const PLACEHOLDER_PORT = '8765';
const PLACEHOLDER_SHOP = 'http://localhost:3001';

describe(GUIDE, { timeout: 600_000 }, () => {
  const { blocks, block } = markedBlocks(GUIDE);
  const documented = documentedTools(GUIDE, 'mandate');
  const shopTools = documentedTools(GUIDE, 'demo-shop');
  let server: ServerProcess;
  let owner: HttpOwner;
  let machine: FreshMachine;
  const started: ChildProcess[] = [];

  /** A block of the guide as this run's reader has it: the placeholders replaced. */
  const filled = (text: string, extra: Record<string, string> = {}): string =>
    Object.entries({ [PLACEHOLDER_URL]: server.baseUrl, [PLACEHOLDER_HOME]: machine.home, ...extra }).reduce((t, [from, to]) => t.replaceAll(from, to), text);

  before(async () => {
    server = await startServer({ name: 'mcp docs service', env: { DATABASE_URL: '' } });
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'mcp-docs' });
    machine = freshMachine();
  });

  after(async () => {
    for (const p of started) await stopGroup(p);
    await server?.stop();
    machine?.remove();
  });

  /** Connects the MCP SDK's client to a stdio server as a host starts it (in the machine's folder, with its environment); answers its tools. */
  async function toolsOverStdio(entry: StdioEntry): Promise<Tool[]> {
    const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...machine.env, ...entry.env }, cwd: machine.cwd, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
    const client = new Client({ name: 'docs-mcp host', version: '1.0.0' });
    try {
      await client.connect(transport);
      return (await client.listTools()).tools;
    } catch (e) {
      throw new Error(`${entry.command} ${entry.args.join(' ')}: ${e instanceof Error ? e.message : String(e)}\nstderr: ${stderr}`);
    } finally {
      await client.close();
    }
  }

  async function toolsOverHttp(entry: HttpEntry): Promise<Tool[]> {
    const client = new Client({ name: 'docs-mcp host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }));
    try {
      return (await client.listTools()).tools;
    } finally {
      await client.close();
    }
  }

  /** The tools a server lists, as the guide's table writes them: name, required and optional inputs. */
  const asDocumented = (tools: Tool[]) =>
    tools.map((t) => {
      const fields = Object.keys(t.inputSchema.properties ?? {});
      const required = t.inputSchema.required ?? [];
      return { name: t.name, required: fields.filter((f) => required.includes(f)), optional: fields.filter((f) => !required.includes(f)) };
    });

  /** Fails unless the server's tools are exactly the tables' (in their order), names and inputs. */
  function assertTheTable(tools: Tool[], tables: DocumentedTool[] = documented): void {
    const sort = (x: DocumentedTool) => ({ name: x.name, required: [...x.required].sort(), optional: [...x.optional].sort() });
    assert.deepEqual(asDocumented(tools).map(sort), tables.map(sort));
  }

  it('the guide has the blocks this test runs, and a table of the nine tools', () => {
    const marked = blocks.filter((b) => b.marker).map((b) => `${b.marker}: ${b.name} (${b.lang})`);
    assert.deepEqual(marked, [
      'run: pair (sh)',
      'host: claude-desktop (json)',
      'host: claude-code (sh)',
      'host: vscode (json)',
      'run: http (sh)',
      'host: claude-code-http (sh)',
      'host: vscode-http (json)',
      'run: openapi (sh)',
    ]);
    assert.equal(blocks.filter((b) => !b.marker).length, 0, 'every block of the guide is run here');
    assert.equal(documented.length, 9);
    assert.deepEqual(shopTools.map((t) => t.name), ['list_products', 'list_orders', 'checkout']);
  });

  it('the pair command, run as it stands on a fresh machine, downloads the tool from the service and pairs the agent', async () => {
    const made = await owner.ok<{ code: string; command: string }>('POST', '/api/agents/pairing-codes', { name: 'Claude' });
    const line = filled(block('run', 'pair'), { [PLACEHOLDER_CODE]: made.code }).trim();
    assert.equal(line, made.command, 'the guide shows the command the owner app shows');
    const paired = await machine.sh(line);
    assert.equal(paired.code, 0, `${showShellRun(paired)}\n${server.logs()}`);
    assert.match(paired.stdout, /Paired: agent ag_[a-z0-9]+ \("Claude"\)/);
    // Where the hosts' MANDATE_AGENT_DIR points.
    const key = JSON.parse(readFileSync(join(machine.home, '.mandate-agent', 'key.json'), 'utf8')) as { agent_id?: string };
    assert.match(String(key.agent_id), /^ag_/);
  });

  for (const host of ['claude-desktop', 'vscode', 'claude-code']) {
    it(`${host}: the server the host starts answers, with the guide's tools`, async () => {
      const text = filled(block('host', host));
      const entry = host === 'claude-code' ? claudeMcpAdd(text).stdio : stdioEntry(configEntry(text));
      assert.ok(entry);
      assert.deepEqual([entry.command, ...entry.args], ['npx', '--yes', `--package=${server.baseUrl}/download/agent`, 'mandate-agent', 'mcp']);
      assert.deepEqual(entry.env, { MANDATE_AGENT_DIR: join(machine.home, '.mandate-agent') });
      assertTheTable(await toolsOverStdio(entry));
    });
  }

  describe('--http', () => {
    let port = 0;
    let token = '';
    let proc: ChildProcess;
    let output = '';

    before(async () => {
      port = await freePort();
      // The guide's lines as they stand, with one added before the last to learn the token the
      // reader's shell made (the reader copies it from there into the host).
      const lines = filled(block('run', 'http'), { [PLACEHOLDER_PORT]: String(port) }).trim().split('\n');
      const script = [...lines.slice(0, -1), 'printf "token=%s\\n" "$MANDATE_MCP_TOKEN"', `exec ${lines.at(-1)}`].join('\n');
      // Its own process group: sh, npx and the node it starts are stopped together (stopGroup).
      proc = spawn('/bin/sh', ['-c', script], { cwd: machine.cwd, env: machine.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      started.push(proc);
      const pgid = proc.pid;
      process.once('exit', () => killGroup(pgid, 'SIGKILL')); // a test process that ends early leaves nothing running
      proc.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
      proc.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
      token = await until('the token line', () => /^token=(.*)$/m.exec(output)?.[1]);
      await until('mandate-agent mcp --http listening', async () => {
        if (proc.exitCode !== null) throw new Error(`it exited (${proc.exitCode}):\n${output}`);
        return fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST' }).then((r) => r.status, () => undefined);
      }, { ms: 60_000, describe: () => output });
    });

    it('openssl made a token of 64 hex characters; without it the server answers 401, for a foreign Host 403', async () => {
      assert.match(token, /^[0-9a-f]{64}$/);
      const ping = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) };
      assert.equal((await fetch(`http://127.0.0.1:${port}/mcp`, ping)).status, 401);
      // fetch cannot set Host; node:http can (what a page reaching the server through a rebound DNS name sends).
      const foreign = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...ping.headers, authorization: `Bearer ${token}`, host: 'evil.example.com' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(ping.body);
      });
      assert.equal(foreign, 403);
    });

    it('claude mcp add --transport http: its URL and header reach the server, with the guide\'s tools', async () => {
      const added = claudeMcpAdd(filled(block('host', 'claude-code-http'), { [PLACEHOLDER_PORT]: String(port), $MANDATE_MCP_TOKEN: token }));
      assert.ok(added.http);
      assert.deepEqual(added.http, { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer ${token}` } });
      assertTheTable(await toolsOverHttp(added.http));
    });

    it('VS Code\'s HTTP entry, with the token it asked for: the guide\'s tools', async () => {
      const json = filled(block('host', 'vscode-http'), { [PLACEHOLDER_PORT]: String(port) });
      const config = JSON.parse(json) as { inputs: { id: string; password: boolean }[] };
      assert.deepEqual(config.inputs.map((i) => [i.id, i.password]), [['mandate-token', true]]);
      const entry = httpEntry(configEntry(json.replace('${input:mandate-token}', token)));
      assertTheTable(await toolsOverHttp(entry));
    });
  });

  describe('--openapi with the demo shop', () => {
    let shop: Child;
    let shopUrl = '';

    before(async () => {
      // `npm run demo:shop` as its README runs it (cloud mode, Mandate at BASE_URL, site localhost:<port>), on a free port.
      const port = await freePort();
      shopUrl = `http://localhost:${port}`;
      shop = runNode('demo shop', ['--import', 'tsx', 'examples/demo-shop/shop.ts'], { env: { PORT: String(port), MANDATE_URL: server.baseUrl } });
      await shop.waitFor('demo shop listening on', 60_000);
    });
    after(() => shop?.stop());

    it('the guide\'s command offers the shop\'s operations as tools beside the nine, with the inputs of its table', async () => {
      const [command = '', ...args] = shellWords(filled(block('run', 'openapi'), { [PLACEHOLDER_SHOP]: shopUrl }));
      assert.deepEqual(args.slice(-2), ['--openapi', `${shopUrl}/openapi.json`]);
      // From a shell on the machine: the agent of the pair command, in ~/.mandate-agent.
      assertTheTable(await toolsOverStdio({ command, args, env: {} }), [...documented, ...shopTools]);
    });
  });
});

/** Signals the process group `pgid` (no error when it is gone). */
function killGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  try {
    if (pgid !== undefined) process.kill(-pgid, signal);
  } catch {
    // already ended
  }
}

/** Stops a process started in its own group (sh, npx and the node they start), and waits for it. */
async function stopGroup(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = new Promise((resolve) => p.once('close', resolve));
  killGroup(p.pid, 'SIGTERM');
  const timer = setTimeout(() => killGroup(p.pid, 'SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
}
