import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { REPO_ROOT, runNode } from '../../server/test/helpers/child-process.ts';
import { detailsDigestOf } from '@mandate/protocol';
import { markedBlocks } from '../../server/test/helpers/doc-examples.ts';
import { HttpOwner, type PendingRequest, call } from '../../server/test/helpers/over-http.ts';
import { until } from '../../server/test/helpers/until.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import { TestSite } from './helpers/test-site.ts';

// The real `mandate-agent` bin as a child process, against a real server and the test site; the
// owner approves over HTTP while the CLI waits. Every output is kept and checked for secrets.

const BIN = fileURLToPath(new URL('../bin/mandate-agent.js', import.meta.url));

type Run = { code: number | null; stdout: string; stderr: string };

describe('mandate-agent CLI', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let site: TestSite;
  let root = '';
  let dir = ''; // the main agent's directory
  let agentId = '';
  const outputs: string[] = [];
  const secrets = new Set<string>();

  /** Starts the bin; `stderr()` shows what it wrote so far, `done` resolves when it exits. */
  function start(args: string[], env: Record<string, string> = {}): { stderr: () => string; done: Promise<Run> } {
    const child = runNode('mandate-agent', [BIN, ...args], { env: { MANDATE_AGENT_DIR: join(root, 'default-dir'), MANDATE_PASSWORD: '', ...env } });
    const done = child.exited.then((code): Run => {
      outputs.push(child.stdout(), child.stderr());
      collectSecrets();
      return { code, stdout: child.stdout(), stderr: child.stderr() };
    });
    return { stderr: child.stderr, done };
  }

  const cli = (args: string[], env: Record<string, string> = {}): Promise<Run> => start(args, env).done;

  /** Runs the bin and, once it shows it is waiting for the owner, answers as the owner. */
  async function whileWaiting(args: string[], answer: () => Promise<unknown>): Promise<Run> {
    const run = start(args);
    const deadline = Date.now() + 30_000;
    while (!run.stderr().includes('Waiting for the owner')) {
      const exited = await Promise.race([run.done, new Promise((r) => setTimeout(r, 50))]);
      if (exited) return exited as Run; // it never waited: the assertions will say why
      assert.ok(Date.now() < deadline, `the CLI did not start waiting: ${run.stderr()}`);
    }
    await answer();
    return run.done;
  }

  /** Every private key and refresh token that any agent directory holds right now. */
  function collectSecrets(): void {
    for (const d of readdirSync(root)) {
      const agentDir = join(root, d);
      const key = join(agentDir, 'key.json');
      if (existsSync(key)) {
        try {
          secrets.add((JSON.parse(readFileSync(key, 'utf8')) as { private_jwk: { d: string } }).private_jwk.d);
        } catch { /* a test writes broken files on purpose */ }
      }
      const stateDir = join(agentDir, 'state');
      if (!existsSync(stateDir)) continue;
      for (const f of readdirSync(stateDir).filter((f) => f.endsWith('.json'))) {
        secrets.add((JSON.parse(readFileSync(join(stateDir, f), 'utf8')) as { state: { refreshToken: string } }).state.refreshToken);
      }
    }
  }

  const json = (r: Run): Record<string, any> => JSON.parse(r.stdout) as Record<string, any>;
  const expectCode = (r: Run, code: number) => assert.equal(r.code, code, `exit ${r.code}, expected ${code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'mandate-agent-cli-'));
    server = await startServer({ name: 'cli test server' });
    owner = await HttpOwner.signUp(server, server.baseUrl);
    secrets.add(owner.password);
    site = await TestSite.start(server.url);
    dir = join(root, 'main');
  });

  after(async () => {
    await site?.stop();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('shows help, and refuses bad usage with exit code 2', async () => {
    const help = await cli(['--help']);
    expectCode(help, 0);
    assert.match(help.stdout, /Commands:/);
    assert.match(help.stdout, /Exit codes/);
    const requestHelp = await cli(['request', '--help']);
    expectCode(requestHelp, 0);
    assert.match(requestHelp.stdout, /--scopes/);
    expectCode(await cli(['frobnicate']), 2);
    expectCode(await cli(['request', '--dir', dir, '--scopes', 'list']), 2); // no --site
    expectCode(await cli(['token', '--site', 'x.example', '--bogus']), 2);
    const noKey = await cli(['status', '--dir', join(root, 'empty')]);
    expectCode(noKey, 2);
    assert.match(noKey.stderr, /mandate-agent init/);
    expectCode(await cli(['init', '--dir', join(root, 'nopw'), '--service', server.url, '--name', 'X', '--email', owner.email]), 2); // no password, no terminal
  });

  it('init registers the key with the owner\'s password from MANDATE_PASSWORD (and keeps the key if sign-in fails)', async () => {
    const wrong = await cli(['init', '--dir', dir, '--service', server.url, '--name', 'CLI bot', '--email', owner.email], { MANDATE_PASSWORD: 'not-the-password' });
    expectCode(wrong, 1);
    assert.match(wrong.stderr, /invalid email or password/);
    const keptD = (JSON.parse(readFileSync(join(dir, 'key.json'), 'utf8')) as { private_jwk: { d: string } }).private_jwk.d;

    const r = await cli(['init', '--dir', dir, '--service', server.url, '--name', 'CLI bot', '--email', owner.email, '--json'], { MANDATE_PASSWORD: owner.password });
    expectCode(r, 0);
    const out = json(r);
    assert.match(out.agent_id, /^ag_/);
    assert.equal(out.registered, true);
    assert.equal(out.public_jwk.d, undefined);
    agentId = out.agent_id;
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, 'key.json')).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(join(dir, 'key.json'), 'utf8')) as { agent_id: string; private_jwk: { d: string } };
    assert.equal(saved.agent_id, agentId);
    assert.equal(saved.private_jwk.d, keptD, 'the key of the failed attempt was reused');
    const agents = await owner.ok<{ id: string; name: string }[]>('GET', '/api/agents');
    assert.ok(agents.some((a) => a.id === agentId && a.name === 'CLI bot'));

    const again = await cli(['init', '--dir', dir, '--service', server.url, '--name', 'Other']);
    expectCode(again, 2);
    assert.match(again.stderr, /already holds the key of agent/);
  });

  it('init without --email prints the public key and the steps; set-id checks the id before saving it', async () => {
    const manual = join(root, 'manual');
    const r = await cli(['init', '--dir', manual, '--service', server.url, '--name', 'Manual bot']);
    expectCode(r, 0);
    assert.match(r.stdout, new RegExp(`${server.url}/app`));
    assert.match(r.stdout, /mandate-agent set-id ag_\.\.\. --dir /);
    const jwkLine = r.stdout.split('\n').find((l) => l.startsWith('{"kty"')) ?? '';
    const jwk = JSON.parse(jwkLine) as Record<string, string>;
    assert.equal(jwk.d, undefined);

    const who = await cli(['whoami', '--dir', manual, '--json']);
    expectCode(who, 0);
    assert.equal(json(who).agent_id, null);
    assert.deepEqual(json(who).public_jwk, jwk);
    expectCode(await cli(['status', '--dir', manual]), 2); // no agent id yet

    const otherAgent = await owner.createAgent('Someone else', (await AgentKey.generate()).publicJwk);
    const wrongId = await cli(['set-id', otherAgent, '--dir', manual]);
    expectCode(wrongId, 1);
    assert.match(wrongId.stderr, /does not accept this key/);
    expectCode(await cli(['set-id', 'not-an-id', '--dir', manual]), 2);

    const id = await owner.createAgent('Manual bot', jwk);
    const set = await cli(['set-id', id, '--dir', manual]);
    expectCode(set, 0);
    assert.match(set.stdout, /status: ok/);
    assert.equal((JSON.parse(readFileSync(join(manual, 'key.json'), 'utf8')) as { agent_id: string }).agent_id, id);
  });

  it('request --wait shows progress while the owner approves, and exits 0', async () => {
    let asked: { scopes: string[] } | undefined;
    const r = await whileWaiting(['request', '--dir', dir, '--site', site.siteId, '--scopes', 'list,pay', '--wait', '--interval', '0.2', '--json'], async () => (asked = await owner.answerNext(agentId, 'initial')));
    expectCode(r, 0);
    assert.deepEqual(asked?.scopes, ['list', 'pay']);
    const out = json(r);
    assert.equal(out.status, 'approved');
    assert.deepEqual(out.scopes, ['list', 'pay']);
    assert.match(out.txn_id, /^t_/);
    assert.match(r.stderr, /Waiting for the owner to approve access to 127\.0\.0\.1:\d+ on their phone… \d:\d\d left/);

    const dup = await cli(['request', '--dir', dir, '--site', site.siteId, '--scopes', 'list', '--json']);
    expectCode(dup, 1);
    assert.deepEqual(json(dup).error, { code: 'service_error', status: 409, detail: 'access already approved', next_step: 'get a pass with POST /api/v1/token' });
  });

  it('token prints what the pass allows, the pass only with --show, and never the refresh token', async () => {
    const r = await cli(['token', '--dir', dir, '--site', site.siteId, '--json']);
    expectCode(r, 0);
    const out = json(r);
    assert.deepEqual(out.scope, ['list', 'pay']);
    assert.equal(out.fetched, true);
    assert.ok(out.expires_in > 500 && out.expires_in <= 600);
    assert.equal(out.access_token, undefined);
    assert.equal(statSync(join(dir, 'state', `${site.siteId}.json`)).mode & 0o777, 0o600);

    const shown = await cli(['token', '--dir', dir, '--site', site.siteId, '--show']);
    expectCode(shown, 0);
    assert.match(shown.stdout, /valid for \d+ s \(kept\)/, 'the kept pass was reused');
    const state = JSON.parse(readFileSync(join(dir, 'state', `${site.siteId}.json`), 'utf8')) as { state: { accessToken: string } };
    assert.ok(shown.stdout.includes(state.state.accessToken), 'the pass is shown with --show');

    const refreshed = await cli(['token', '--dir', dir, '--site', site.siteId, '--refresh', '--json']);
    expectCode(refreshed, 0);
    assert.equal(json(refreshed).fetched, true);
  });

  it('call sends the pass and a proof, prints the body, and handles a step-up', async () => {
    const list = await cli(['call', '--dir', dir, `${site.url}/items`]);
    expectCode(list, 0);
    assert.deepEqual(JSON.parse(list.stdout), { items: ['a', 'b'], agent: 'CLI bot' });
    assert.match(list.stderr, /HTTP 200/);

    site.seen.length = 0;
    const pay = await whileWaiting(['call', '--dir', dir, '-X', 'POST', '--data', '{"amount":"5"}', '--interval', '0.2', '--json', `${site.url}/orders/5/pay`], () => owner.answerNext(agentId, 'stepup'));
    expectCode(pay, 0);
    assert.deepEqual(json(pay), { status: 200, content_type: 'application/json', body: { order: '5', done: 'pay' } });
    assert.deepEqual(site.seen.map((s) => s.status), [403, 200]);
    assert.match(pay.stderr, /Waiting for the owner to approve "pay order 5" on their phone… \d:\d\d left/);

    const missing = await cli(['call', '--dir', dir, `${site.url}/nothing`]);
    expectCode(missing, 1);
    assert.match(missing.stderr, /HTTP 404/);

    const noAction = await cli(['call', '--dir', dir, '-X', 'POST', `${site.url}/orders/9/cancel`]);
    expectCode(noAction, 1);
    assert.match(noAction.stderr, /--stepup-action/);

    const unreachable = await cli(['call', '--dir', dir, `http://127.0.0.1:${await freePort()}/items`, '--site', site.siteId]);
    expectCode(unreachable, 3);
  });

  it('stepup prints a token the site accepts once', async () => {
    const r = await whileWaiting(['stepup', '--dir', dir, '--site', site.siteId, '--action', 'pay order 8', '--interval', '0.2', '--json'], () => owner.answerNext(agentId, 'stepup'));
    expectCode(r, 0);
    const token = json(r).stepup_token as string;
    assert.match(token, /^ey/);
    const withToken = await cli(['call', '--dir', dir, '-X', 'POST', '-H', `X-Service-Stepup: ${token}`, '--no-stepup', `${site.url}/orders/8/pay`]);
    expectCode(withToken, 0);
    assert.deepEqual(JSON.parse(withToken.stdout), { order: '8', done: 'pay' });
    const reused = await cli(['call', '--dir', dir, '-X', 'POST', '-H', `X-Service-Stepup: ${token}`, '--no-stepup', `${site.url}/orders/8/pay`]);
    expectCode(reused, 1);
    assert.deepEqual(JSON.parse(reused.stdout), { error: 'stepup_used_or_expired' });
  });

  it('wait reports a denied request with exit code 1', async () => {
    const r = await cli(['stepup', '--dir', dir, '--site', site.siteId, '--action', 'pay order 9', '--no-wait', '--json']);
    expectCode(r, 0);
    const txn = json(r).txn_id as string;
    const waited = await whileWaiting(['wait', txn, '--dir', dir, '--interval', '0.2', '--json'], () => owner.answerNext(agentId, 'stepup', 'deny'));
    expectCode(waited, 1);
    assert.equal(json(waited).error.code, 'approval_denied');
  });

  it('approve asks for one action on any site: exit 0 approved, 1 denied, 2 error, 3 expired; a mode may approve at once', { timeout: 60_000 }, async () => {
    const ok = await whileWaiting(['approve', 'elsewhere.example', 'checkout:submit', '--label', 'Pay now', '--amount', '5 EUR', '--dir', dir, '--interval', '0.2', '--json'], () => owner.answerNext(agentId, 'agent_approval'));
    expectCode(ok, 0);
    assert.equal(json(ok).status, 'approved');
    const denied = await whileWaiting(['approve', 'elsewhere.example', 'form:submit', '--label', 'Post', '--dir', dir, '--interval', '0.2', '--json'], () => owner.answerNext(agentId, 'agent_approval', 'deny'));
    expectCode(denied, 1);
    const timedOut = await cli(['approve', 'elsewhere.example', 'click', '--label', 'Next', '--dir', dir, '--interval', '0.2', '--timeout', '1', '--json']);
    expectCode(timedOut, 3);
    expectCode(await cli(['approve', 'elsewhere.example', 'Not An Action', '--dir', dir]), 2);
    expectCode(await cli(['approve', 'elsewhere.example', '--dir', dir]), 2);
    // The owner's smart mode approves a low action at once, no waiting (not on elsewhere.example:
    // the denial above pauses it for an hour).
    await owner.ok('POST', `/api/agents/${agentId}/approval-modes`, { site: '*', mode: 'smart' });
    const auto = await cli(['approve', 'calm.example', 'click', '--label', 'Next page', '--dir', dir, '--json']);
    expectCode(auto, 0);
    await owner.ok('POST', `/api/agents/${agentId}/approval-modes`, { site: '*', mode: null });
  });

  /**
   * Runs a shell script of the docs as written, with `mandate-agent` on PATH being this CLI for the
   * main agent (`--dir`, and a short poll interval). `out()` is its stdout so far.
   */
  function runDocScript(script: string): { out: () => string; done: Promise<number> } {
    const bin = join(root, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'mandate-agent'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@" --dir ${JSON.stringify(dir)} --interval 0.2\n`, { mode: 0o755 });
    const run = spawn('sh', ['-c', script], { env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` } });
    let out = '';
    run.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const done = new Promise<number>((r) => run.on('close', (code) => r(code ?? -1)));
    return { out: () => out, done: done.then((code) => (outputs.push(out), code)) };
  }

  it('the approve script of docs/agents/cli.md runs as written and branches on the answer', async () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/agents/cli.md'), 'utf8');
    const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').find((b) => b.includes('mandate-agent approve'));
    assert.ok(block, 'the docs show an approve script');
    const run = runDocScript(block);
    const p = await until('the request of the docs script', async () => (await owner.pending()).find((x) => x.agent_id === agentId && x.kind === 'agent_approval' && x.site === 'shop.example.com'), { ms: 30_000 });
    await owner.approve(p.id);
    assert.equal(await run.done, 0);
    assert.match(run.out(), /approved: click/);
  });

  it('stepup --summary --details-json (docs/agents/cli.md, as written): the owner sees the summary, the token carries the digest, a site checking another digest refuses it', async () => {
    const block = markedBlocks('docs/agents/cli.md').block('run', 'bound-stepup');
    const body = /^body='(.+)'$/m.exec(block)?.[1];
    assert.ok(body, `the script sets body: ${block}`);
    const digest = detailsDigestOf(JSON.parse(body));
    // The script asks at shop.example: the agent gets access there first.
    expectCode(await whileWaiting(['request', '--dir', dir, '--site', 'shop.example', '--scopes', 'list', '--wait', '--interval', '0.2'], () => owner.answerNext(agentId, 'initial')), 0);

    const run = runDocScript(block);
    const asked = await owner.nextPending(agentId, 'stepup');
    assert.equal(asked.site, 'shop.example');
    assert.equal(asked.action, 'pay order 42');
    assert.deepEqual(asked.details, { summary: 'Pay 19.90 EUR to shop.example for order 42', digest });
    await owner.approve(asked.id);
    assert.equal(await run.done, 0);
    const token = run.out().trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { details_digest?: string };
    assert.equal(claims.details_digest, digest, 'the token carries the digest of the body');

    const check = (details_digest: string) => call<{ valid: boolean; error?: string }>(server, 'POST', '/api/v1/stepup/verify', { stepup_token: token, site: 'shop.example', action: 'pay order 42', details_digest });
    assert.equal((await check(detailsDigestOf({ ...JSON.parse(body), amount: '1999.00' }))).body.error, 'stepup_wrong_details', 'another body is refused');
    assert.equal((await check(digest)).body.valid, true, 'this body is accepted');
  });

  it('stepup --digest and approve --summary: a digest made elsewhere is sent as given; --json names it', async () => {
    const digest = detailsDigestOf({ cart: ['p1', 'p2'], total: '31.00 EUR' });
    const asked = await cli(['stepup', '--dir', dir, '--site', site.siteId, '--action', 'pay order 11', '--summary', 'Pay 31.00 EUR\nfor 2 items', '--digest', digest, '--no-wait', '--json']);
    expectCode(asked, 0);
    assert.equal(json(asked).details_digest, digest);
    const card = (await owner.pending()).find((p) => p.id === json(asked).txn_id);
    assert.deepEqual(card?.details, { summary: 'Pay 31.00 EUR\nfor 2 items', digest });
    await owner.deny(json(asked).txn_id as string);

    let seen: PendingRequest | undefined;
    const approved = await whileWaiting(['approve', 'elsewhere.example', 'checkout:submit', '--label', 'Pay now', '--summary', 'Pay 31.00 EUR', '--details-json', '{"total": "31.00 EUR", "cart": ["p1", "p2"]}', '--dir', dir, '--interval', '0.2', '--json'], async () => (seen = await owner.answerNext(agentId, 'agent_approval')));
    expectCode(approved, 0);
    assert.equal(json(approved).details_digest, digest, 'the same JSON in another key order and spacing has the same digest');
    assert.deepEqual(seen?.details, { label: 'Pay now', summary: 'Pay 31.00 EUR', digest });
  });

  it('details flags that do not add up are usage errors naming the flag, and nothing is asked', async () => {
    const digest = detailsDigestOf({ a: 1 });
    const before = (await owner.pending()).length;
    const stepup = ['stepup', '--dir', dir, '--site', site.siteId, '--action', 'pay order 12', '--no-wait'];
    const cases: [string[], RegExp][] = [
      [[...stepup, '--summary', 'Pay'], /--summary needs --details-json JSON or --digest DIGEST/],
      [[...stepup, '--details-json', '{"a":1}'], /--details-json needs --summary/],
      [[...stepup, '--digest', digest], /--digest needs --summary/],
      [[...stepup, '--summary', 'Pay', '--details-json', '{"a":1}', '--digest', digest], /--details-json or --digest, not both/],
      [[...stepup, '--summary', 'Pay', '--details-json', '{"a":'], /--details-json is not JSON/],
      [[...stepup, '--summary', 'Pay', '--details-json', '"\\ud800"'], /--details-json has no canonical form/],
      [[...stepup, '--summary', 'Pay', '--digest', 'short'], /--digest must be base64url SHA-256/],
      [[...stepup, '--summary', 'x'.repeat(501), '--digest', digest], /--summary must be 1 to 500 printable characters/],
      [[...stepup, '--summary', 'Pay \u202Enow', '--digest', digest], /--summary must be/],
      [['approve', 'elsewhere.example', 'click', '--dir', dir, '--summary', 'Pay'], /--summary needs --details-json/],
      [['approve', 'elsewhere.example', 'click', '--dir', dir, '--summary', 'Pay', '--details-json', 'nope'], /--details-json is not JSON/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expectCode(r, 2);
      assert.match(r.stderr, message, args.join(' '));
    }
    assert.equal((await owner.pending()).length, before, 'no request was filed');
  });

  it('notify, report-status and status', async () => {
    const note = await cli(['notify', 'all done', '--title', 'Shopping', '--kind', 'done', '--dir', dir]);
    expectCode(note, 0);
    assert.match(note.stdout, /^Note kept in the owner's inbox and Activity; no device was notified/, 'says where it went: no device is set up here');
    expectCode(await cli(['report-status', 'checking out', '--site', site.siteId, '--dir', dir]), 0);
    const reported = await cli(['takeover-report', '--site', 'shop.example', '--kind', 'shadow_dom', '--detail', 'closed shadow root', '--json', '--dir', dir]);
    expectCode(reported, 0);
    assert.match(String(json(reported).id), /^tkr_/);
    expectCode(await cli(['takeover-report', '--site', 'shop.example', '--kind', 'nonsense', '--dir', dir]), 2);
    const reports = await owner.ok<{ kind: string }[]>('GET', '/api/v1/takeover/reports');
    assert.deepEqual(reports.map((r) => r.kind), ['shadow_dom']);
    const activity = await owner.ok<{ items: unknown[] }>('GET', `/api/activity?agent=${agentId}&action=agent.note`);
    assert.equal(activity.items.length, 1);
    const status = await cli(['status', '--json'], { MANDATE_AGENT_DIR: dir });
    expectCode(status, 0);
    assert.equal(json(status).global_flag, 'ok');
    assert.equal(json(status).agent_id, agentId);
  });

  it('plan submit, status and result (decisions §20)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const file = join(root, 'plan.json');
    writeFileSync(file, JSON.stringify({ title: 'Nightly tidy', start_at: now + 60, end_at: now + 3600, steps: [{ url: 'https://shop.example/list', button: 'Save' }, { id: 'pay', url: 'https://shop.example/pay', button: 'Pay now', path: '/pay' }] }));
    const submitted = await cli(['plan', 'submit', file, '--dir', dir, '--json']);
    expectCode(submitted, 0);
    const { plan_id: planId, txn_id: txnId } = json(submitted) as { plan_id: string; txn_id: string };
    await owner.approve(txnId);
    const status = await cli(['plan', 'status', planId, '--dir', dir]);
    expectCode(status, 0);
    assert.match(status.stdout, /Plan p_\S+ "Nightly tidy": approved/);
    assert.match(status.stdout, /1  Save: pre-approved, 1 use\(s\) left, waiting/);
    assert.match(status.stdout, /pay  Pay now: always asks, asking/);
    expectCode(await cli(['plan', 'result', 't_aaaaaaaaaaaaaaaaaaaaaaaaaa', '--dir', dir]), 2);
    expectCode(await cli(['plan', 'frobnicate', 'x', '--dir', dir]), 2);
  });

  it('approve --text: a publish step matches only the same texts, sent as digests (decisions §20)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const file = join(root, 'publish-plan.json');
    const post = 'Hello, readers:\nnew  stock today';
    writeFileSync(file, JSON.stringify({ title: 'Morning post', start_at: now, end_at: now + 3600, steps: [{ url: 'https://blog.example/new', button: 'Publish', texts: [post] }] }));
    const submitted = await cli(['plan', 'submit', file, '--dir', dir, '--json']);
    expectCode(submitted, 0);
    await owner.approve((json(submitted) as { txn_id: string }).txn_id);
    // Another text asks the owner (answered here by a denial); the planned text, trailing spaces and all, passes at once.
    const other = await whileWaiting(['approve', 'blog.example', 'form:submit', '--label', 'Publish', '--text', 'Something else', '--dir', dir, '--interval', '0.2', '--json'], () => owner.answerNext(agentId, 'agent_approval', 'deny'));
    expectCode(other, 1);
    const same = await cli(['approve', 'blog.example', 'form:submit', '--label', 'Publish', '--text', `${post}   `, '--dir', dir, '--json']);
    expectCode(same, 0);
    const pending = await owner.pending();
    assert.ok(!pending.some((p) => p.agent_id === agentId && p.site === 'blog.example'), 'no card for the planned text');
    expectCode(await cli(['approve', 'blog.example', 'form:submit', ...Array.from({ length: 9 }, (_, i) => ['--text', `t${i}`]).flat(), '--dir', dir]), 2);
  });

  it('refuses a key file others can read, with the fix', async () => {
    chmodSync(join(dir, 'key.json'), 0o644);
    const r = await cli(['whoami', '--dir', dir]);
    chmodSync(join(dir, 'key.json'), 0o600);
    expectCode(r, 2);
    assert.match(r.stderr, /too open/);
    assert.match(r.stderr, /chmod 600 .*key\.json/);
  });

  it('exits 3 when the service cannot be reached', async () => {
    const gone = join(root, 'gone');
    expectCode(await cli(['init', '--dir', gone, '--service', `http://127.0.0.1:${await freePort()}`, '--name', 'Lost']), 0);
    const r = await cli(['set-id', 'ag_abc', '--dir', gone, '--json']);
    expectCode(r, 3);
    assert.equal(json(r).error.code, 'unreachable');
  });

  it('--timeout ends with the command that waits for the request again, and that command runs', async () => {
    const r = await cli(['request', '--dir', dir, '--site', 'timeout.example', '--scopes', 'list', '--wait', '--timeout', '1', '--interval', '0.2']);
    expectCode(r, 1);
    const txn = /\(request (t_[a-z0-9]+)\)/.exec(r.stderr)?.[1] ?? '';
    assert.match(txn, /^t_/, r.stderr);
    const last = r.stderr.trimEnd().split('\n').at(-1) ?? '';
    const printed = new RegExp(`still open until it expires\\. Wait for it again with: (.+ wait ${txn} --dir \\S+)$`).exec(last)?.[1];
    assert.ok(printed, `the last line ends with the command to copy: ${last}`);
    assert.doesNotMatch(last, /its id/);
    // Copied as printed (the same invocation form as the CLI's other hints), it waits for that request.
    const again = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('sh', ['-c', `${printed} --timeout 1 --interval 0.2`], { cwd: REPO_ROOT, env: { ...process.env, MANDATE_PASSWORD: '' }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(again.code, 1, again.stderr);
    assert.ok(again.stderr.trimEnd().endsWith(printed), again.stderr);

    // The same for a step-up that `call` waits for.
    const paid = await cli(['call', '--dir', dir, '-X', 'POST', '--timeout', '1', '--interval', '0.2', `${site.url}/orders/6/pay`]);
    expectCode(paid, 1);
    assert.match(paid.stderr.trimEnd(), / Wait for it again with: .+ wait t_[a-z0-9]+ --dir \S+$/);
  });

  it('after the owner revoked the agent, call, status, request and token explain it and name the next step', async () => {
    await owner.flag(agentId, 'revoked');
    const nextStep = /next step: only the owner can undo this: ask them to unblock the agent in the Mandate app \(Agents\); if they removed it, pair a new agent: .*mandate-agent pair --help/;
    // The kept pass is still fresh: the site refuses it, and the service confirms why.
    const called = await cli(['call', '--dir', dir, `${site.url}/items`]);
    expectCode(called, 1);
    assert.match(called.stderr, /this agent was revoked by its owner: the site answered agent_revoked, and POST \/api\/v1\/token answered 403 agent revoked by its owner/);
    assert.match(called.stderr, nextStep);
    const calledJson = await cli(['call', '--dir', dir, '--json', `${site.url}/items`]);
    expectCode(calledJson, 1);
    assert.equal(json(calledJson).error.code, 'agent_revoked');
    assert.equal(json(calledJson).error.site_answer, 'agent_revoked');

    const r = await cli(['status', '--dir', dir]);
    expectCode(r, 1);
    assert.match(r.stderr, /agent revoked by its owner/);
    assert.match(r.stderr, nextStep);
    const asked = await cli(['request', '--dir', dir, '--site', 'other.example', '--scopes', 'list']);
    expectCode(asked, 1);
    assert.match(asked.stderr, /this agent was revoked by its owner: POST \/api\/v1\/authz-requests answered 403 agent revoked by its owner/);
    assert.match(asked.stderr, nextStep);
    const t = await cli(['token', '--dir', dir, '--site', site.siteId, '--refresh', '--json']);
    expectCode(t, 1);
    assert.equal(json(t).error.code, 'agent_revoked');
    assert.match(t.stderr, nextStep);
  });

  it('never printed the private key, a refresh token or the password', () => {
    collectSecrets();
    assert.ok(secrets.size >= 4, `only ${secrets.size} secrets collected`);
    for (const secret of secrets) {
      for (const out of outputs) assert.ok(!out.includes(secret), `a secret appeared in the output:\n${out}`);
    }
  });
});
