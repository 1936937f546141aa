import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, REPO_ROOT, runTs } from '../helpers/child-process.ts';
import { HttpOwner, expectStatus, remoteAccessRequest, remoteAgent, remoteDecide, remoteToken } from '../helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { sleep, until } from '../helpers/until.ts';

// Proves the quickstart guides: the real server, the example site and the example agent as their own
// processes, exactly as the guides run them; this test plays the owner over HTTP (sign-up, passkey,
// agent creation, approving the access request and the step-up on the "phone").

const children: Child[] = [];

/** Runs `examples/quickstart/<script>` with `node --import tsx` from the repository root, as the guides do. */
function runExample(script: string, args: string[], env: Record<string, string> = {}): Child {
  const child = runTs(`examples/quickstart/${script}`, { args, env });
  children.push(child);
  return child;
}

/** Listens on `port` of 127.0.0.1 and forwards every connection to `targetPort`: Mandate "coming up" at a fixed address. */
async function forward(port: number, targetPort: number): Promise<Server> {
  const proxy = createServer((socket) => {
    const upstream = connect(targetPort, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
  return proxy;
}

/** The default of `const PORT = Number(process.env.PORT ?? <n>)` in a file. */
function defaultPort(file: string): number {
  const m = /const PORT = Number\(process\.env\.PORT \?\? (\d+)\)/.exec(readFileSync(join(REPO_ROOT, file), 'utf8'));
  assert.ok(m, `${file} has no default port`);
  return Number(m[1]);
}

describe('quickstart guides, end to end', () => {
  let server: ServerProcess;
  let site: Child;
  let dir = '';
  let owner: HttpOwner;
  let agentId = '';
  let home = '';
  let siteUrl = '';

  const logs = () => [`--- server\n${server?.logs() ?? ''}`, ...children.map((c, i) => `--- child ${i}\n${c.output()}`)].join('\n');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-quickstart-'));
    server = await startServer({ name: 'quickstart server' });

    // The owner: signs up, registers a passkey ("phone").
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'quick' });

    // The agent developer makes a key pair (agent-quickstart.md step 1), with the guide's command: no
    // path given, so the key goes to ~/.mandate (a home of this test's own), outside the checkout ...
    home = join(dir, 'home');
    const keygen = runExample('keygen.ts', [], { HOME: home });
    assert.equal(await keygen.exited, 0, keygen.output());
    const publicJwk = JSON.parse(keygen.output().trim().split('\n').at(-1) ?? '') as Record<string, string>;
    assert.equal(publicJwk.d, undefined, 'only the public key is printed');
    const keyFile = join(home, '.mandate', 'agent-key.json');
    assert.ok(keygen.output().includes(`private key saved to ${keyFile}`), keygen.output());
    assert.equal(JSON.parse(readFileSync(keyFile, 'utf8')).d !== undefined, true, 'the private key is kept in the file');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600, 'only its owner may read the key file');
    assert.equal(statSync(join(home, '.mandate')).mode & 0o077, 0, 'nor list its directory');

    // ... and the owner creates the agent with the public key (step 2).
    agentId = await owner.createAgent('Quickstart agent', publicJwk);

    // The site (site-quickstart.md), verifying in cloud mode against this server.
    const port = await freePort();
    siteUrl = `http://127.0.0.1:${port}`;
    site = runExample('site.ts', [], { MANDATE_URL: server.url, PORT: String(port), HOST: '127.0.0.1', SITE_ID: `127.0.0.1:${port}`, PUBLIC_BASE_URL: siteUrl });
    await site.waitFor('listening on', 30_000);
  });

  after(async () => {
    for (const c of children) await c.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the agent gets access, lists, is refused payment without a step-up and pays with one', { timeout: 90_000 }, async () => {
    // As the guide runs it: the key file found where keygen.ts put it (the site URL is this test's).
    const agent = runExample('agent.ts', [server.url, agentId], { HOME: home, SITE_URL: siteUrl });

    // The owner's phone: approve each request of this agent as it arrives, with the passkey.
    const approved: { kind: string; agentOutputThen: string }[] = [];
    const seen = new Set<string>();
    const deadline = Date.now() + 80_000;
    while (agent.running()) {
      assert.ok(Date.now() < deadline, `the agent did not finish:\n${logs()}`);
      for (const p of await owner.pending()) {
        if (p.agent_id !== agentId || seen.has(p.id)) continue;
        seen.add(p.id);
        const agentOutputThen = agent.output();
        await owner.approve(p.id);
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
    assert.equal(out.match(/GET \/listings -> 200 \{"listings":\[/g)?.length, 2, logs());
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
    assert.equal(await status(siteUrl, 'GET', '/listings'), '401 {"error":"invalid_request","error_description":"no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>"}');
    const forged = { authorization: 'Bearer not.a.pass', dpop: 'not.a.proof' };
    assert.match(await status(siteUrl, 'GET', '/listings', forged), /^401 \{"error":"invalid_token","error_description":"[^"]+"\}$/);
    assert.equal(await status(siteUrl, 'POST', '/orders/7/pay', forged), '404 {"error":"no such order"}');

    const port = await freePort();
    const nowhere = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const cut = runExample('site.ts', [], { MANDATE_URL: nowhere, PORT: String(port), HOST: '127.0.0.1', SITE_ID: `127.0.0.1:${port}` });
    await cut.waitFor('listening on', 30_000);
    assert.match(await status(`http://127.0.0.1:${port}`, 'GET', '/listings', forged), /^503 \{"error":"verification_unavailable","error_description":"[^"]+"\}$/);
    await cut.stop();
  });

  it('local mode: started while Mandate is down it keeps running and refuses; once Mandate answers, requests pass within seconds', { timeout: 90_000 }, async () => {
    const mandatePort = await freePort(); // nothing listens here yet: Mandate is "down"
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const siteId = `127.0.0.1:${port}`;
    const local = runExample('site-local.ts', [], {
      MANDATE_URL: `http://127.0.0.1:${mandatePort}`, MANDATE_ISSUER: server.baseUrl, PORT: String(port), HOST: '127.0.0.1', SITE_ID: siteId, PUBLIC_BASE_URL: base,
    });
    await local.waitFor('listening on', 30_000);

    // An agent with access to this site and a pass (Mandate itself is up; the site cannot reach it).
    const agent = await remoteAgent(server, owner, 'Local agent');
    const txn = expectStatus(await remoteAccessRequest(server, agent, siteId, ['list']), 200, 'access request').body.txn_id;
    expectStatus(await remoteDecide(server, owner, txn), 200, 'approve');
    const pass = expectStatus(await remoteToken(server, agent, siteId), 200, 'token').body.access_token;
    const list = async () => {
      const url = `${base}/listings`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${pass}`, dpop: await agent.proof(pass, url) } });
      return `${res.status} ${await res.text()}`;
    };

    // Down: refused with a clear 503, retried with back-off, never a crash (no unhandled rejection).
    assert.match(await list(), /^503 \{"error":"verification_unavailable","error_description":"[^"]+"\}$/);
    await until('two failed fetches', () => ((local.output().match(/retrying in \d+ s/g)?.length ?? 0) >= 2 ? true : undefined), { ms: 20_000, describe: local.output });
    assert.match(local.output(), /revocation list not fetched \(.+\); retrying in 1 s\n[\s\S]*retrying in 2 s/);
    assert.equal(local.running(), true, local.output());
    assert.doesNotMatch(local.output(), /Unhandled|\n\s+at /);

    // Up: the next retry fetches keys and revocation list; requests pass within seconds, not a minute.
    const proxy = await forward(mandatePort, server.port);
    try {
      const ok = await until('a listing through the local-mode site', async () => {
        const answer = await list();
        return answer.startsWith('200 ') ? answer : undefined;
      }, { ms: 15_000, everyMs: 250, describe: local.output });
      assert.equal(ok, `200 {"listings":[{"id":"l1","title":"Bike, 3 gears"},{"id":"l2","title":"Lamp"}],"for":"${agent.id}"}`);
      // The site rules, in local mode: no credentials 401, a replayed proof 401.
      assert.match(await (await fetch(`${base}/listings`)).text(), /^\{"error":"invalid_/);
      const url = `${base}/listings`;
      const headers = { authorization: `Bearer ${pass}`, dpop: await agent.proof(pass, url) };
      assert.equal((await fetch(url, { headers })).status, 200);
      assert.match(await (await fetch(url, { headers })).text(), /^\{"error":"dpop_replay","error_description":"[^"]+"\}$/);
    } finally {
      await local.stop(); // its kept-alive connections end with it, so the proxy can close
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('a port already in use: one line naming the port and PORT, exit status 1, no stack trace', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      for (const script of ['site.ts', 'site-local.ts']) {
        const child = runExample(script, [], { MANDATE_URL: 'http://127.0.0.1:9', PORT: String(port), HOST: '127.0.0.1' });
        assert.equal(await child.exited, 1, child.output());
        assert.equal(child.output().replace(/^revocation list not fetched.*\n/gm, '').trim(), `site: port ${port} is already in use (another example running?); start it with PORT=<a free port>`);
      }
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    // The agent quickstart runs its site beside the demo shop: they do not share a default port.
    assert.equal(defaultPort('examples/quickstart/site.ts'), 3000);
    assert.notEqual(defaultPort('examples/demo-shop/shop.ts'), defaultPort('examples/quickstart/site.ts'));
  });

  it('key files are ignored by git, wherever they are written', () => {
    const ignored = readFileSync(join(REPO_ROOT, '.gitignore'), 'utf8').split('\n');
    assert.ok(ignored.includes('*-key.json'), 'agent-key.json and the like are never committed by mistake');
  });

  it('the guides quote the example files as they are', () => {
    // Every code block preceded by `<!-- from examples/quickstart/<file> -->` must appear in that file verbatim.
    const quoted = new Map<string, number>();
    for (const guide of ['docs/agents/quickstart.md', 'docs/sites/quickstart.md']) {
      const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
      for (const m of text.matchAll(/<!-- from (examples\/quickstart\/[\w.-]+) -->\n```\w*\n([\s\S]*?)```/g)) {
        const [, file = '', code = ''] = m;
        assert.ok(readFileSync(join(REPO_ROOT, file), 'utf8').includes(code), `${guide}: a block differs from ${file}:\n${code}`);
        quoted.set(file, (quoted.get(file) ?? 0) + 1);
      }
    }
    assert.deepEqual([...quoted.keys()].sort(), ['examples/quickstart/agent.ts', 'examples/quickstart/keygen.ts', 'examples/quickstart/site-local.ts', 'examples/quickstart/site.ts']);

    // The local-mode section holds no code of its own: all of it is the tested site-local.ts.
    const sites = readFileSync(join(REPO_ROOT, 'docs/sites/quickstart.md'), 'utf8');
    const section = /\n## Local mode\n([\s\S]*?)\n## /.exec(sites)?.[1] ?? '';
    const blocks = [...section.matchAll(/(<!-- from examples\/quickstart\/site-local\.ts -->\n)?```ts\n/g)];
    assert.ok(blocks.length >= 5, `the local-mode section quotes the local-mode site (${blocks.length} blocks)`);
    assert.ok(blocks.every((b) => b[1] !== undefined), 'every TypeScript block of the local-mode section is quoted from site-local.ts');
  });
});
