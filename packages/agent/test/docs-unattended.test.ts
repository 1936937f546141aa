import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { WebSocket } from 'ws';
import { runNode } from '../../server/test/helpers/child-process.ts';
import { docExamples, docShellBlocks, exampleProject, typecheck } from '../../server/test/helpers/doc-examples.ts';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { until } from '../../server/test/helpers/until.ts';
import { MandateAgent } from '../src/agent.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import { saveKeyFile } from '../src/keys/key-file.ts';
import { TestSite } from './helpers/test-site.ts';

// docs/agents/unattended.md, and the SDK examples of docs/agents/sdk.md, cannot rot: every block
// marked `<!-- example: <file>.ts -->` is written to a reader's project as it stands and
// typechecked; every one marked `(run)` runs against a real Mandate server process, with the agent
// that `mandate-agent pair` would leave in MANDATE_AGENT_DIR, while the owner answers over HTTP. The
// guide's shell blocks run in `sh` with the real `mandate-agent` bin. The take-over example steers
// a real Chromium page over the real relay.

const GUIDE = 'docs/agents/unattended.md';
const SDK_GUIDE = 'docs/agents/sdk.md';
const BIN = fileURLToPath(new URL('../bin/mandate-agent.js', import.meta.url));

type Json = Record<string, any>;

describe(`${GUIDE} and the examples of ${SDK_GUIDE}`, { timeout: 300_000 }, () => {
  const guide = docExamples(GUIDE);
  const sdk = docExamples(SDK_GUIDE);
  const shell = docShellBlocks(GUIDE);
  let server: ServerProcess;
  let owner: HttpOwner;
  let root = '';
  let project = '';
  let agentDir = '';
  let agentId = '';
  let agent: MandateAgent;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'mandate-agent-docs-'));
    project = exampleProject('mandate-agent-docs-project-', [...guide, ...sdk]);
    server = await startServer({ name: 'docs test server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    const key = await AgentKey.generate();
    agentId = await owner.createAgent('Docs bot', key.publicJwk);
    // What `mandate-agent pair` leaves behind: the examples find their agent with fromDirectory().
    agentDir = join(root, 'agent');
    saveKeyFile(agentDir, { serviceUrl: server.url, agentId, name: 'Docs bot', key, createdAt: new Date().toISOString() });
    agent = MandateAgent.fromDirectory(agentDir);
    // `mandate-agent` on the PATH of the shell examples: the real bin; waits poll every 0.2 s.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'mandate-agent'), `#!/bin/sh\nif [ "$1" = approve ]; then set -- "$@" --interval 0.2; fi\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
  });

  after(async () => {
    await server?.stop();
    for (const d of [root, project]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const env = (): Record<string, string> => ({ MANDATE_AGENT_DIR: agentDir, PATH: `${join(root, 'bin')}:${process.env['PATH'] ?? ''}` });

  /** Runs an example file of the project as its reader would (`node --import tsx file.ts`). */
  function runExample(file: string, extraImports: string[] = []) {
    return runNode(file, [...extraImports.flatMap((i) => ['--import', i]), '--import', 'tsx', join(project, file)], { cwd: project, env: env() });
  }

  /** Runs a shell block of the guide; resolves with its exit code and output. */
  function runShell(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const child = spawn('sh', ['-c', script], { env: { ...process.env, ...env() } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
  }

  /** The agent's open request of this kind and action, as the owner's app lists it (with details and category). */
  const pendingOf = async (kind: string, action: string): Promise<Json> =>
    until(`a ${kind} request for ${action}`, async () => ((await owner.ok<{ pending: Json[] }>('GET', '/api/me')).pending ?? []).find((p) => p['agent_id'] === agentId && p['kind'] === kind && p['action'] === action), { ms: 30_000 });

  const lastLine = (text: string): string => text.trim().split('\n').at(-1) ?? '';

  /** Waits for `step` while the child runs; if the child exits first, fails with its output. */
  const whileRunning = async <T>(child: { exited: Promise<number | null>; output(): string }, step: Promise<T>): Promise<T> =>
    Promise.race([step, child.exited.then((code): never => { throw new Error(`the example exited (${code}) first:\n${child.output()}`); })]);

  const activity = async (action: string): Promise<Json[]> => (await owner.ok<{ items: Json[] }>('GET', `/api/activity?agent=${agentId}&action=${action}`)).items;

  it('the guides have their examples, and the shell blocks the commands they show', () => {
    assert.deepEqual(guide.map((e) => [e.file, e.run]), [['approve.ts', true], ['digest.ts', true], ['plan.ts', true], ['takeover.ts', true]]);
    assert.deepEqual(sdk.map((e) => [e.file, e.run]), [['sdk-agent.ts', true], ['sdk-approve.ts', true], ['sdk-wba.ts', true]]);
    assert.equal(shell.length, 2);
    assert.match(shell[0] ?? '', /^mandate-agent approve /);
    assert.match(shell[1] ?? '', /^mandate-agent takeover-report /);
  });

  it('every example typechecks (strict, as this repository compiles)', () => {
    assert.deepEqual(typecheck(project, [...guide, ...sdk].map((e) => e.file)), []);
  });

  it('the approve script exits 0 when approved, 1 when denied; under a smart mode its low action is approved at once, with an inbox notice and Activity', async () => {
    const script = shell[0] ?? '';
    // Smart first: a denial on the site pauses smart there for an hour.
    await owner.ok('POST', `/api/agents/${agentId}/approval-modes`, { site: '*', mode: 'smart' });
    const auto = await runShell(script);
    assert.equal(auto.code, 0, auto.stderr);
    assert.equal(lastLine(auto.stdout), 'approved: clicking Save draft', 'approved at once, no card');
    assert.doesNotMatch(auto.stderr, /Asked the owner/);
    const inbox = await owner.ok<{ items: Json[] }>('GET', '/api/notifications');
    const notice = inbox.items.find((n) => n['type'] === 'auto_approved');
    assert.equal(notice?.['title'], 'Docs bot acted on shop.example.com without asking');
    assert.equal(notice?.['body'], 'Save draft · mode smart (low)');
    const [record] = await activity('agent_approval.auto_approved');
    assert.deepEqual([record?.['detail']?.['category'], record?.['detail']?.['reason'], record?.['detail']?.['via']], ['low', 'mode smart (low)', 'mode']);
    await owner.ok('POST', `/api/agents/${agentId}/approval-modes`, { site: '*', mode: null });

    // The script branches on the exit code of `approve` (0, 1); its own ends with the echo.
    for (const [answer, said] of [['approve', 'approved: clicking Save draft'], ['deny', 'denied: leaving the draft as it is']] as const) {
      const run = runShell(script);
      const p = await pendingOf('agent_approval', 'click');
      assert.deepEqual([p['action'], p['details']?.['label'], p['details']?.['path'], p['category']], ['click', 'Save draft', '/drafts/7', 'low']);
      if (answer === 'approve') await owner.approve(String(p['id']));
      else await owner.deny(String(p['id']));
      const done = await run;
      assert.equal(done.code, 0, done.stderr);
      assert.equal(lastLine(done.stdout), said);
    }
  });

  it('approve.ts: the card shows the payment; approved by the owner, then denied', async () => {
    for (const [answer, said] of [['approve', /^approved \(t_[a-z0-9]+\): clicking "Pay now"$/], ['deny', /^not approved: denied$/]] as const) {
      const child = runExample('approve.ts');
      const p = await whileRunning(child, pendingOf('agent_approval', 'checkout:submit'));
      assert.deepEqual([p['action'], p['category'], p['details']?.['amount'], p['details']?.['card_fields']], ['checkout:submit', 'money', '42.00 EUR', true]);
      if (answer === 'approve') await owner.approve(String(p['id']));
      else await owner.deny(String(p['id']));
      assert.equal(await child.exited, 0, child.output());
      assert.match(child.stdout().trim(), said);
      assert.match(child.stderr(), /^(approved|denied|pending), \d+ s left$/m, 'progress on stderr');
    }
  });

  it('digest.ts prints the normalised text, and the digests agree', async () => {
    const child = runExample('digest.ts');
    assert.equal(await child.exited, 0, child.output());
    assert.equal(child.stdout(), '"Thanks for your order!\\nIt ships on Monday."\ntrue\n');
  });

  it('plan.ts: the owner approves the card (the payment step cannot be ticked); both ticked steps pass without a card and are done', async () => {
    const child = runExample('plan.ts');
    const card = await whileRunning(child, owner.nextPending(agentId, 'plan'));
    await owner.approve(card.id); // no `steps`: all, but money and security are never pre-approved
    assert.equal(await child.exited, 0, child.output());
    assert.deepEqual(child.stdout().trim().split('\n'), [
      'save: approved',
      'reply: approved',
      'save: done, pre-approved',
      'reply: done, pre-approved',
      'pay: asking, asks',
    ]);
    const [plan] = await owner.ok<Json[]>('GET', `/api/plans?agent_id=${agentId}`);
    assert.equal(plan?.['status'], 'approved');
    const used = await activity('agent_approval.auto_approved');
    assert.deepEqual(used.filter((r) => r['detail']?.['via'] === 'plan').map((r) => r['detail']?.['step']).sort(), ['reply', 'save']);
    // The same click with another text is not the step: it asks.
    const other = await agent.requestApproval('shop.example.com', 'form:submit', { label: 'Send', path: '/messages/43', text_digests: ['0'.repeat(64)] });
    assert.equal(other.status, 'pending');
    await owner.deny(other.txnId);
  });

  describe('takeover.ts: the owner steers a real Chromium page past a check', () => {
    let browser: Browser;
    let shop: Server;
    let shopUrl = '';
    before(async () => {
      browser = await launchChromium('take-over docs');
      // A page the agent is stuck on: one button, which leads on to /account.
      shop = createServer((req, res) => {
        const body = req.url === '/account'
          ? '<!doctype html><title>Account</title><p>Signed in</p>'
          : '<!doctype html><title>Check</title><form action="/account"><button style="position:absolute;left:100px;top:100px;width:200px;height:80px">I am a person</button></form>';
        res.writeHead(200, { 'content-type': 'text/html' }).end(body);
      });
      const port = await freePort();
      await new Promise<void>((r) => shop.listen(port, '127.0.0.1', r));
      shopUrl = `http://127.0.0.1:${port}`;
    });
    after(async () => {
      await browser?.close();
      shop?.closeAllConnections();
      await new Promise((r) => shop?.close(r));
    });

    it('frames reach the owner, the owner\'s click moves the page on, and the agent hands back with done', async () => {
      const { handOver } = (await import(pathToFileURL(join(project, 'takeover.ts')).href)) as { handOver: (agent: MandateAgent, page: Page, reason: string) => Promise<string> };
      const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
      await page.goto(`${shopUrl}/check`);
      const ended = handOver(agent, page, 'a check only a person can pass');

      const session = await until('the open take-over', async () => (await owner.ok<Json[]>('GET', '/api/takeover/active')).find((t) => t['agent_id'] === agentId), { ms: 30_000 });
      assert.equal(session['reason'], 'a check only a person can pass');
      const sid = String(session['id']);
      assert.match(sid, /^tk_/);
      const seen: Json[] = [];
      const ownerEnd = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/takeover/${sid}/owner`, { headers: owner.auth });
      ownerEnd.on('message', (d) => seen.push(JSON.parse(d.toString()) as Json));
      await new Promise((resolve, reject) => { ownerEnd.once('open', resolve); ownerEnd.once('error', reject); });

      const frame = await until('a frame', async () => seen.find((m) => m['t'] === 'frame'), { ms: 30_000 });
      assert.deepEqual([frame['w'], frame['h']], [800, 600]);
      assert.deepEqual([...Buffer.from(String(frame['data']), 'base64').subarray(0, 2)], [0xff, 0xd8], 'a JPEG');
      ownerEnd.send(JSON.stringify({ t: 'click', x: 200, y: 140 }));

      assert.equal(await ended, 'done');
      assert.equal(new URL(page.url()).pathname, '/account');
      await until('the owner is told', async () => (seen.at(-1)?.['t'] === 'done' ? true : undefined), { ms: 10_000 });
      assert.ok(seen.some((m) => m['t'] === 'url' && String(m['url']).includes('/account')), 'the new page was announced');
      ownerEnd.close();
      await page.close();
    });
  });

  it('the takeover-report command reports the site; the owner lists it', async () => {
    const r = await runShell(shell[1] ?? '');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Reported: tkr_/);
    const reports = await owner.ok<Json[]>('GET', '/api/v1/takeover/reports');
    assert.deepEqual([reports[0]?.['site'], reports[0]?.['kind'], reports[0]?.['detail']], ['shop.example.com', 'bot_detection', 'captcha came back after the owner solved it']);
  });

  describe(`${SDK_GUIDE} examples`, () => {
    let site: TestSite;
    let redirect = '';
    before(async () => {
      // The guide's shop.example, here: requests to https://shop.example go to this test site, which
      // verifies them as https://shop.example (so the DPoP proofs made for that URL hold).
      site = await TestSite.start(server.url, { siteId: 'shop.example', publicUrl: 'https://shop.example' });
      redirect = join(root, 'shop-example.mjs');
      writeFileSync(redirect, `const real = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return real(url.startsWith('https://shop.example/') ? ${JSON.stringify(site.url)} + url.slice('https://shop.example'.length) : input, init);
};\n`);
    });
    after(() => site?.stop());

    it('sdk-agent.ts asks for access, calls the site, gets the step-up for the payment and tells the owner', async () => {
      const child = runExample('sdk-agent.ts', [pathToFileURL(redirect).href]);
      const asked = await whileRunning(child, owner.answerNext(agentId, 'initial'));
      assert.deepEqual([asked.site, asked.scopes], ['shop.example', ['list', 'pay']]);
      const stepup = await whileRunning(child, owner.answerNext(agentId, 'stepup'));
      assert.equal(stepup.action, 'pay order 42');
      assert.equal(await child.exited, 0, child.output());
      assert.match(child.stdout(), /approved scopes: \[ 'list', 'pay' \]/);
      assert.match(child.stdout(), /200 \{ items: \[ 'a', 'b' \], agent: 'Docs bot' \}/);
      assert.deepEqual(site.seen.map((s) => [s.method, s.path, s.status]), [['GET', '/listings', 200], ['POST', '/orders/42/pay', 403], ['POST', '/orders/42/pay', 200]]);
      assert.ok(site.seen.at(-1)?.stepup, 'the retry carried the step-up token');
      assert.equal((await activity('agent.note')).length, 1);
    });

    it('sdk-approve.ts waits for the owner and clicks once approved', async () => {
      const child = runExample('sdk-approve.ts');
      const p = await whileRunning(child, pendingOf('agent_approval', 'checkout:submit'));
      assert.equal(p['category'], 'money');
      await owner.approve(String(p['id']));
      assert.equal(await child.exited, 0, child.output());
      assert.equal(child.stdout().trim(), 'approved: click the button');
    });
  });
});
