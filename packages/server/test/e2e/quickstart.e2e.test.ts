import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, REPO_ROOT, runTs } from '../helpers/child-process.ts';
import { HttpOwner } from '../helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { sleep } from '../helpers/until.ts';

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

describe('quickstart guides, end to end', () => {
  let server: ServerProcess;
  let site: Child;
  let dir = '';
  let owner: HttpOwner;
  let agentId = '';
  let keyFile = '';
  let siteUrl = '';

  const logs = () => [`--- server\n${server?.logs() ?? ''}`, ...children.map((c, i) => `--- child ${i}\n${c.output()}`)].join('\n');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-quickstart-'));
    server = await startServer({ name: 'quickstart server' });

    // The owner: signs up, registers a passkey ("phone").
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'quick' });

    // The agent developer makes a key pair (agent-quickstart.md step 1) ...
    keyFile = join(dir, 'agent-key.json');
    const keygen = runExample('keygen.ts', [keyFile]);
    assert.equal(await keygen.exited, 0, keygen.output());
    const publicJwk = JSON.parse(keygen.output().trim().split('\n').at(-1) ?? '') as Record<string, string>;
    assert.equal(publicJwk.d, undefined, 'only the public key is printed');
    assert.equal(JSON.parse(readFileSync(keyFile, 'utf8')).d !== undefined, true, 'the private key is kept in the file');

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
    const agent = runExample('agent.ts', [server.url, agentId, keyFile, siteUrl]);

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
    await cut.waitFor('listening on', 30_000);
    assert.equal(await status(`http://127.0.0.1:${port}`, 'GET', '/listings', forged), '503 {"error":"verification_unavailable"}');
    await cut.stop();
  });

  it('the guides quote the example files as they are', () => {
    // Every code block preceded by `<!-- from examples/quickstart/<file> -->` must appear in that file verbatim.
    let quoted = 0;
    for (const guide of ['docs/agents/quickstart.md', 'docs/sites/quickstart.md']) {
      const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
      for (const m of text.matchAll(/<!-- from (examples\/quickstart\/[\w.-]+) -->\n```\w*\n([\s\S]*?)```/g)) {
        const [, file = '', code = ''] = m;
        assert.ok(readFileSync(join(REPO_ROOT, file), 'utf8').includes(code), `${guide}: a block differs from ${file}:\n${code}`);
        quoted++;
      }
    }
    assert.ok(quoted >= 8, `only ${quoted} quoted blocks`);
  });
});
