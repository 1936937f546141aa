import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { detailsDigestOf } from '@mandate/protocol';
import { type Child, REPO_ROOT, runTs } from '../../server/test/helpers/child-process.ts';
import { docShellBlocks, markedBlocks } from '../../server/test/helpers/doc-examples.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import { CALL_AGAIN } from '../src/index.ts';
import { passFetch } from './helpers/mcp-stand-in.ts';
import { configFromEnv, listeningLine } from '../../../examples/mcp-server/config.ts';
import { type RealMandate, ownerAnswers, pendingSiteStepups, realApp, realPass, startRealMandate } from './helpers/mcp-real.ts';

// examples/mcp-server as its own process (node:http and Express, cloud and local mode), started as
// its README says, against a real Mandate over real HTTP; this test is the MCP client (the official
// SDK's Client with a fetch that presents the pass) and the owner (passkey approvals).
// docs/sites/mcp.md cannot rot: its TypeScript blocks are quotes of the example's files (checked
// here word for word), and the answers it shows are compared with the running example's.

const GUIDE = 'docs/sites/mcp.md';
const EXAMPLE = 'examples/mcp-server';
const guide = markedBlocks(GUIDE);
const guideText = readFileSync(join(REPO_ROOT, GUIDE), 'utf8');
/** The guide's prose with line breaks as spaces, to find a sentence wrapped over lines. */
const guideProse = guideText.replace(/\s+/g, ' ');

/** A block the guide shows as an answer, with its example addresses (port 3002, Mandate on 8080) made this run's. */
function shownAnswer(name: string, ex: Example, m: RealMandate): string {
  return guide
    .block('answer', name)
    .replaceAll('http://localhost:3002', ex.base)
    .replaceAll('localhost:3002', new URL(ex.base).host)
    .replaceAll('http://localhost:8080', m.url);
}

/** An ```http block of the guide: `HTTP/1.1 <status> <reason>` and one `WWW-Authenticate` line. */
function shownChallenge(text: string): { status: number; www: string } {
  const m = /^HTTP\/1\.1 (\d{3}) [A-Za-z ]+\nWWW-Authenticate: (.+)\n$/.exec(text);
  assert.ok(m, `not a status line and a challenge: ${text}`);
  return { status: Number(m[1]), www: m[2] ?? '' };
}

const textOf = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

type Example = { base: string; resource: string; child: Child };

async function startExample(m: RealMandate, file: string, mode: 'cloud' | 'local'): Promise<Example> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = runTs(`examples/mcp-server/${file}`, { env: { MANDATE_URL: m.url, MODE: mode, PORT: String(port), PUBLIC_URL: base, APPROVAL_WAIT_SEC: '2' } });
  await child.waitFor('listening on', 60_000);
  return { base, resource: `${base}/mcp`, child };
}

async function connect(ex: Example, fetchImpl: typeof fetch): Promise<Client> {
  const client = new Client({ name: 'mcp-example-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(ex.resource), { fetch: fetchImpl }));
  return client;
}

/** A JSON-RPC POST as MCP clients send it. */
function rpc(ex: Example, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(ex.resource, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
const deleteCall = (title: string) => ({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_note', arguments: { title } } });

describe('examples/mcp-server against a real Mandate', () => {
  let m: RealMandate;
  before(async () => {
    m = await startRealMandate();
  });
  after(() => m.close());

  for (const [file, mode] of [['server.ts', 'cloud'], ['server.ts', 'local'], ['express.ts', 'cloud'], ['express.ts', 'local']] as const) {
    describe(`${file}, ${mode} mode`, () => {
      let ex: Example;
      before(async () => {
        ex = await startExample(m, file, mode);
      });
      after(async () => {
        assert.equal(await ex.child.stop(), 0, 'exits with 0 on SIGTERM');
      });

      it('prints where it listens and its resource; serves RFC 9728 metadata naming Mandate', async () => {
        const kind = file === 'server.ts' ? 'node:http' : 'Express';
        assert.ok(ex.child.stdout().includes(`notes MCP server (${kind}) listening on ${ex.base}: resource ${ex.resource}, ${mode} mode, Mandate at ${m.url}\n`), ex.child.output());
        const res = await fetch(`${ex.base}/.well-known/oauth-protected-resource/mcp`);
        assert.equal(res.status, 200);
        const metadata: unknown = await res.json();
        assert.deepEqual(metadata, JSON.parse(shownAnswer('metadata', ex, m)), 'as the guide shows it');
        assert.deepEqual(metadata, {
          resource: ex.resource,
          authorization_servers: [m.url],
          scopes_supported: ['notes:read', 'notes:write'],
          bearer_methods_supported: ['header'],
          dpop_signing_alg_values_supported: ['ES256'],
          resource_name: new URL(ex.base).host,
        });
        assert.deepEqual(await (await fetch(`${ex.base}/healthz`)).json(), { mode, ready: true, resource: ex.resource, pendingApprovals: 0 });
      });

      it('without a pass: 401 with the resource_metadata challenge, which the MCP SDK follows to Mandate', async () => {
        const res = await rpc(ex, INITIALIZE);
        assert.equal(res.status, 401);
        const www = res.headers.get('www-authenticate') ?? '';
        assert.equal(www, `Bearer error_description="this MCP server needs a Mandate pass: see resource_metadata", scope="notes:read", resource_metadata="${ex.base}/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256"`);
        assert.deepEqual(shownChallenge(shownAnswer('401', ex, m)), { status: 401, www }, 'as the guide shows it');
        // What an MCP client does with it (the SDK's own discovery): the metadata names Mandate.
        const params = extractWWWAuthenticateParams(res);
        assert.equal(params.resourceMetadataUrl?.href, `${ex.base}/.well-known/oauth-protected-resource/mcp`);
        assert.equal(params.scope, 'notes:read');
        const metadata = await discoverOAuthProtectedResourceMetadata(ex.resource, { resourceMetadataUrl: params.resourceMetadataUrl });
        assert.deepEqual(metadata.authorization_servers, [m.url]);
        // And a path that is not the server's: 404, not a challenge.
        assert.equal((await fetch(`${ex.base}/elsewhere`)).status, 404);
      });

      it('a bearer pass with notes:read: the SDK client lists the tools and calls list_notes; delete_note is 403 insufficient_scope', async () => {
        const app = await realApp(m, ex.resource, ['notes:read']);
        const pass = await realPass(m, app, { bound: false });
        const client = await connect(ex, passFetch(pass, { bound: false }));
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(tools.map((t) => t.name).sort(), ['delete_note', 'list_notes']);
          const notes = JSON.parse(textOf((await client.callTool({ name: 'list_notes', arguments: {} })) as CallToolResult)) as { title: string }[];
          assert.deepEqual(notes.map((n) => n.title), ['Shopping list', 'Trip to Lisbon', 'Book club']);
        } finally {
          await client.close();
        }
        const res = await rpc(ex, deleteCall('Book club'), { authorization: `Bearer ${pass}` });
        assert.equal(res.status, 403);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope", error_description="[^"]+", scope="notes:read notes:write", resource_metadata="[^"]+"/);
        assert.deepEqual(shownChallenge(shownAnswer('403', ex, m)), { status: 403, www: res.headers.get('www-authenticate') }, 'as the guide shows it');
        assert.deepEqual(await pendingSiteStepups(m), [], 'the owner is not asked for a call the pass may not make');
      });

      it('delete_note: progress then "call again"; the owner approves that very call with the passkey; the call again runs once', async () => {
        const app = await realApp(m, ex.resource, ['notes:read', 'notes:write']);
        const pass = await realPass(m, app, { bound: true });
        const client = await connect(ex, passFetch(pass, { bound: true, signer: app }));
        try {
          const progress: string[] = [];
          const call = async (name: string, args: Record<string, unknown>) =>
            (await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000, onprogress: (p) => void progress.push(p.message ?? '') })) as CallToolResult;

          const first = await call('delete_note', { title: 'Trip to Lisbon' });
          assert.deepEqual([first.isError, textOf(first)], [true, CALL_AGAIN]);
          assert.equal(progress[0], 'Asked the owner on their phone; waiting for their approval');
          assert.ok(guideProse.includes(`"${progress[0]}"`), 'the guide quotes the progress the model sees');
          const cards = await pendingSiteStepups(m);
          assert.equal(cards.length, 1);
          assert.equal(cards[0]?.action, 'delete_note');
          assert.deepEqual(cards[0]?.details, { summary: 'Delete note Trip to Lisbon', digest: detailsDigestOf({ title: 'Trip to Lisbon' }) });

          await ownerAnswers(m, cards[0]?.id ?? '', true);
          const approved = await call('delete_note', { title: 'Trip to Lisbon' });
          assert.deepEqual([approved.isError, textOf(approved)], [undefined, 'Deleted note Trip to Lisbon']);
          const left = JSON.parse(textOf(await call('list_notes', {}))) as { title: string }[];
          assert.deepEqual(left.map((n) => n.title), ['Shopping list', 'Book club']);

          // Once: the same call now finds no note (and asks nobody); another note is another card, which the owner denies.
          const gone = await call('delete_note', { title: 'Trip to Lisbon' });
          assert.deepEqual([gone.isError, textOf(gone)], [true, 'There is no note Trip to Lisbon']);
          assert.deepEqual(await pendingSiteStepups(m), []);
          assert.equal(textOf(await call('delete_note', { title: 'Book club' })), CALL_AGAIN);
          const other = await pendingSiteStepups(m);
          assert.deepEqual(other.map((c) => c.details?.summary), ['Delete note Book club']);
          await ownerAnswers(m, other[0]?.id ?? '', false);
          const denied = await call('delete_note', { title: 'Book club' });
          assert.equal(denied.isError, true);
          assert.match(textOf(denied), /denied/);
          assert.equal(JSON.parse(textOf(await call('list_notes', {}))).length, 2);
        } finally {
          await client.close();
        }
      });
    });
  }
});

describe(`${GUIDE} quotes the example and runs what it says`, () => {
  it('every block is a quote of the example, an answer of it, or the commands that start it', () => {
    assert.ok(guide.blocks.length >= 10, `only ${guide.blocks.length} blocks`);
    for (const b of guide.blocks) {
      assert.ok(['quote', 'answer', 'shell'].includes(b.marker), `a block without its mark: ${b.text}`);
      if (b.marker !== 'quote') continue;
      assert.equal(b.lang, 'ts');
      const file = readFileSync(join(REPO_ROOT, EXAMPLE, b.name), 'utf8');
      assert.ok(file.includes(b.text), `${GUIDE}: this block is not in ${EXAMPLE}/${b.name} as written:\n${b.text}`);
    }
    for (const f of readdirSync(join(REPO_ROOT, EXAMPLE)).filter((f) => f.endsWith('.ts'))) assert.ok(guideText.includes(`\`${f}\``), `${GUIDE} names ${f}`);
    assert.deepEqual(guide.blocks.filter((b) => b.marker === 'answer').map((b) => b.name).sort(), ['401', '403', 'call-again', 'metadata']);
  });

  it('the tool error the model reads while the owner decides is the SDK\'s, word for word', () => {
    assert.equal(guide.block('answer', 'call-again'), `${CALL_AGAIN}\n`);
  });

  it('its commands start what the test starts, with settings the example reads; the line it prints is the default one', () => {
    const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const config = readFileSync(join(REPO_ROOT, EXAMPLE, 'config.ts'), 'utf8');
    const lines = guide.block('shell', 'run').split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter((l) => l !== '');
    assert.equal(lines.length, 3);
    for (const line of lines) {
      const m = /^((?:[A-Z_]+=\S+ )*)npm (start|run (\S+))$/.exec(line);
      assert.ok(m, `not a command of this repository: ${line}`);
      if (m[3] !== undefined) assert.equal(scripts[m[3]], `node --import tsx ${EXAMPLE}/server.ts`, `npm run ${m[3]}`);
      for (const name of (m[1] ?? '').split(' ').filter(Boolean).map((a) => a.split('=')[0])) assert.ok(config.includes(`env['${name}']`), `the example does not read ${name}`);
    }
    assert.equal(scripts['start'], 'node scripts/start.mjs');
    // The example's README shows the same commands, and the Express version's.
    const readme = docShellBlocks(`${EXAMPLE}/README.md`).join('').split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter((l) => l !== '');
    assert.deepEqual(readme, [...lines, `node --import tsx ${EXAMPLE}/express.ts`]);
    assert.ok(guideText.includes(`\`${listeningLine(configFromEnv({}), 'node:http')}\``), 'the line printed with the default settings');
  });
});

describe('examples/mcp-server with a bad setting', () => {
  for (const [env, said] of [
    [{ MODE: 'cloudy' }, 'MODE must be cloud or local, not cloudy'],
    [{ PUBLIC_URL: 'http://localhost:3002/notes' }, 'PUBLIC_URL must be an origin'],
    [{ APPROVAL_WAIT_SEC: '60' }, 'APPROVAL_WAIT_SEC must be a whole number of seconds from 1 to 25'],
  ] as const) {
    it(`says so in one line and exits with 2: ${Object.keys(env).join()}`, async () => {
      const child = runTs(`${EXAMPLE}/server.ts`, { env: { PORT: '0', ...env } });
      assert.equal(await child.exited, 2);
      assert.equal(child.stdout(), '');
      assert.ok(child.stderr().startsWith(`notes MCP server: ${said}`), child.stderr());
      assert.equal(child.stderr().trim().split('\n').length, 1);
    });
  }
});
