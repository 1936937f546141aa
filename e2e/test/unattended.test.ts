import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium } from '../../packages/server/test/helpers/browser.ts';
import { type Child, runNode } from '../../packages/server/test/helpers/child-process.ts';
import { call, expectStatus } from '../../packages/server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../packages/server/test/helpers/server-process.ts';
import { until } from '../../packages/server/test/helpers/until.ts';
import { type OwnerTab, expectNoError, goTo, openNotifications, openOwnerTab, requestCard, sessionCookie, signUp } from '../../packages/web/test/helpers/owner-app.ts';
import { AgentCli, type CliResult, show } from './helpers/cli.ts';
import type { TakeoverAgentLine } from './helpers/takeover-agent.ts';

// Unattended agents (decisions §19-§21), every part real: the Mandate service as its own process,
// the owner in Chromium on a phone with a passkey (virtual authenticator), the agent paired with the
// code the owner app shows and run as the `mandate-agent` CLI, and for the take-over an agent
// process of its own using the SDK's `streamTakeover` over `ws`. The tests build on each other:
// the owner and the agent of `before`, the plan, then the take-over.

const AGENT_NAME = 'Restocker';
const SHOP = 'shop.example';
const TAKEOVER_SCRIPT = 'e2e/test/helpers/takeover-agent.ts';

type PlanStep = { id: string; button: string; state: string; approved: boolean; uses_left: number; pre_approvable: boolean };
type PlanJson = { plan_id: string; title: string; status: string; steps: PlanStep[] };

/** Two steps the owner can tick (a low one and an unknown one with its path) and a payment, which always asks. */
function nightlyPlan(now: number): object {
  return {
    title: 'Nightly restock',
    start_at: now,
    end_at: now + 3600,
    steps: [
      { id: 'cart', url: `https://${SHOP}/cart`, button: 'Add to cart', path: '/cart*' },
      { id: 'list', url: `https://${SHOP}/list`, button: 'Save list', path: '/list', after: ['cart'] },
      { id: 'pay', url: `https://${SHOP}/checkout`, button: 'Pay now', path: '/checkout' },
    ],
  };
}

/** `plan status`/`plan result` as printed: each step as [id, state, approved, uses left]. */
function stepsOf(r: CliResult): [string, string, boolean, number][] {
  assert.equal(r.code, 0, show(r));
  return (r.json as unknown as PlanJson).steps.map((s) => [s.id, s.state, s.approved, s.uses_left]);
}

describe('unattended agents: a pre-approved plan and a take-over, the owner in Chromium', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: OwnerTab;
  let page: Page;
  let agent: AgentCli;
  let cookie = '';
  let scratch = '';

  before(async () => {
    browser = await launchChromium('unattended agents');
    server = await startServer({ name: 'mandate' });
    scratch = mkdtempSync(join(tmpdir(), 'mandate-e2e-unattended-'));
    owner = await openOwnerTab(browser);
    page = owner.page;
    await signUp(page, server.baseUrl, `unattended.${Date.now()}@example.com`);
    await page.locator('#passkey-setup').waitFor({ state: 'visible' });
    await page.click('#passkey-setup-button');
    await page.locator('#passkey-setup').waitFor({ state: 'hidden' });
    cookie = await sessionCookie(owner.context, server.baseUrl);
    agent = await pairAgent(page, server, AGENT_NAME);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    agent?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** What failed, with the service's log. */
  const logs = (r?: CliResult) => `${r ? `${show(r)}\n` : ''}--- mandate\n${server.logs()}`;
  const approve = (action: string, ...flags: string[]) => agent.run('approve', SHOP, action, '--host', SHOP, ...flags);
  const pendingIds = async () => {
    const me = expectStatus(await call<{ pending: { id: string }[] }>(server, 'GET', '/api/me', undefined, { cookie }), 200, 'the owner reads /api/me');
    return me.body.pending.map((p) => p.id);
  };

  it('plan: submitted by the CLI, two of three steps ticked and approved with the passkey; those pass at once without a card, the payment asks and its exit code follows the owner', { timeout: 90_000 }, async () => {
    const planFile = join(scratch, 'plan.json');
    writeFileSync(planFile, JSON.stringify(nightlyPlan(Math.floor(Date.now() / 1000))));
    const submitted = await agent.run('plan', 'submit', planFile);
    assert.equal(submitted.code, 0, logs(submitted));
    const planId = String(submitted.json?.['plan_id']);
    const planTxn = String(submitted.json?.['txn_id']);
    assert.match(planId, /^p_/, show(submitted));

    // The owner's phone: one card with the steps; the payment has no tick box.
    await goTo(page, 'requests');
    const card = await requestCard(page, planTxn);
    await card.locator('.plan-step').nth(2).waitFor();
    assert.match((await card.locator('h3').textContent()) ?? '', new RegExp(`${AGENT_NAME} asks you to pre-approve a plan`));
    assert.equal(await card.locator('input[name="plan-step"]').count(), 2, 'two steps can be ticked');
    assert.match((await card.locator('.plan-step.always-asks').textContent()) ?? '', /Pay now/);
    for (const id of ['cart', 'list']) await card.locator(`input[name="plan-step"][value="${id}"]`).check();
    await card.locator('button.approve').click();
    await card.locator('.outcome.ok').waitFor({ timeout: 15_000 });
    await expectNoError(page);
    assert.deepEqual(stepsOf(await agent.run('plan', 'status', planId)), [['cart', 'waiting', true, 1], ['list', 'waiting', true, 1], ['pay', 'asking', false, 0]]);

    // The run: each chosen step's approval passes at once (exit 0), its result goes back to the plan.
    const cart = await approve('click', '--label', 'Add to cart', '--path', '/cart/desk-lamp');
    assert.equal(cart.code, 0, logs(cart));
    assert.equal(cart.json?.['status'], 'approved');
    const cartTxn = String(cart.json?.['txn_id']);
    assert.deepEqual(stepsOf(await agent.run('plan', 'status', planId))[0], ['cart', 'running', true, 0], 'the use is taken');
    assert.deepEqual(stepsOf(await agent.run('plan', 'result', cartTxn, '--result', 'done'))[0], ['cart', 'done', true, 0]);

    const list = await approve('click', '--label', 'save  LIST', '--path', '/list');
    assert.equal(list.code, 0, logs(list));
    const listTxn = String(list.json?.['txn_id']);
    assert.deepEqual(stepsOf(await agent.run('plan', 'result', listTxn, '--result', 'done')), [['cart', 'done', true, 0], ['list', 'done', true, 0], ['pay', 'asking', false, 0]]);

    // No card for either: nothing pending, and after its next refresh the phone shows none waiting;
    // the inbox says what a rule approved.
    const refreshed = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/me', { timeout: 15_000 }).then((r) => r.response());
    assert.deepEqual(await pendingIds(), []);
    for (const txn of [cartTxn, listTxn]) {
      const r = expectStatus(await call<{ status: string }>(server, 'GET', `/api/v1/authz-requests/${txn}`), 200, 'the agent polls');
      assert.equal(r.body.status, 'approved');
    }
    await goTo(page, 'requests');
    await refreshed;
    assert.equal(await page.locator(`#pending article[data-txn="${cartTxn}"], #pending article[data-txn="${listTxn}"]`).count(), 0, 'no card on the phone');
    assert.equal(await page.locator('#pending article:not(.done)').count(), 0, 'nothing waiting on the phone');
    assert.equal(await page.locator('#pending-count').isVisible(), false, 'no badge');
    await openNotifications(page);
    const ruled = page.locator('#inbox li[data-type="auto_approved"]');
    await until('both approvals in the inbox', async () => ((await ruled.count()) === 2 ? true : undefined), { ms: 15_000 });
    const ruledText = (await ruled.allTextContents()).join('\n');
    for (const button of ['Add to cart', 'Save list']) assert.match(ruledText, new RegExp(`step "${button}" of the plan "Nightly restock" you pre-approved`), ruledText);

    // The payment asks: the CLI waits on the card; denied, it exits 1; asked again and approved, 0.
    const payFlags = ['--label', 'Pay now', '--amount', '19.90 EUR', '--path', '/checkout', '--interval', '0.2', '--timeout', '60'];
    const denied = await answerWaitingApproval(page, approve('checkout:submit', ...payFlags), 'deny');
    assert.equal(denied.result.code, 1, logs(denied.result));
    const refusal = denied.result.json?.['error'] as { code?: string; txn_id?: string } | undefined;
    assert.deepEqual([refusal?.code, refusal?.txn_id], ['approval_denied', denied.txnId], show(denied.result));
    const approved = await answerWaitingApproval(page, approve('checkout:submit', ...payFlags), 'approve');
    assert.equal(approved.result.code, 0, logs(approved.result));
    assert.equal(approved.result.json?.['txn_id'], approved.txnId, 'the CLI waited on the card the owner approved');
    assert.notEqual(approved.txnId, denied.txnId);

    // The payment was no plan step: its result is refused; the plan shows the run's progress.
    const notAStep = await agent.run('plan', 'result', approved.txnId, '--result', 'done');
    assert.notEqual(notAStep.code, 0, show(notAStep));
    assert.match(notAStep.stdout + notAStep.stderr, /no plan step was used by this request/);
    const final = await agent.run('plan', 'status', planId);
    assert.deepEqual(stepsOf(final), [['cart', 'done', true, 0], ['list', 'done', true, 0], ['pay', 'asking', false, 0]]);
    assert.equal(final.json?.['status'], 'approved');
    await expectNoError(page);
    assert.deepEqual(owner.problems, []);
  });

  it('take-over there and back: the agent process asks, the owner opens it from the inbox, sees the agent\'s JPEG, taps and types; the agent hands back and both ends see it end', { timeout: 90_000 }, async () => {
    const screen = await renderScreen(browser, { width: 640, height: 360 });
    const jpegFile = join(scratch, 'screen.jpeg');
    writeFileSync(jpegFile, screen);
    const checkoutUrl = `https://${SHOP}/checkout`;
    const tk = runNode('take-over agent', ['--import', 'tsx', TAKEOVER_SCRIPT,
      '--dir', agent.dir, '--jpeg', jpegFile, '--width', '640', '--height', '360',
      '--url', checkoutUrl, '--reason', 'A security code I cannot read', '--field', 'Security code']);
    try {
      await tk.waitFor('"event":"connected"');
      const requested = linesOf(tk).find((l) => l.event === 'requested');
      assert.ok(requested?.event === 'requested', tk.output());
      const sid = requested.takeover_id;

      // The owner: the bell, the take-over notice, a tap on it opens the take-over page.
      await page.goto(`${server.baseUrl}/app`);
      await openNotifications(page);
      const notice = page.locator('#inbox li[data-type="takeover"]').first();
      await notice.waitFor({ timeout: 15_000 });
      assert.match((await notice.textContent()) ?? '', new RegExp(`${AGENT_NAME} needs you on ${SHOP}.*A security code I cannot read`, 's'));
      await notice.locator('.inbox-open').click();
      await page.waitForURL(`${server.baseUrl}/app/takeover/${sid}`);

      // The agent's frame, byte for byte, and its page.
      const img = page.locator('#tk-frame');
      await img.waitFor({ state: 'visible', timeout: 15_000 });
      assert.equal(await img.getAttribute('src'), `data:image/jpeg;base64,${screen.toString('base64')}`);
      await page.waitForFunction(() => (document.getElementById('tk-frame') as HTMLImageElement).naturalWidth === 640);
      await page.locator('#tk-url', { hasText: checkoutUrl }).waitFor();

      // A tap at a quarter of the width, half the height: a click at (160, 180) of the agent's screen.
      const box = await img.boundingBox();
      assert.ok(box, 'the frame is shown');
      await img.tap({ position: { x: box.width * 0.25, y: box.height * 0.5 } });
      await page.locator('#tk-focus', { hasText: 'Security code' }).waitFor();
      await page.fill('#tk-text', 'K7Q2');
      await page.click('[data-send="text"]');
      await page.click('[data-send="set"]');
      await page.click('[data-key="Enter"]');

      // The agent hands back after Enter: the page says so, and the agent's stream ended with done.
      await page.locator('#tk-status', { hasText: 'The agent has taken over again' }).waitFor({ timeout: 15_000 });
      assert.equal(await tk.exited, 0, tk.output());
      const lines = linesOf(tk);
      const commands = lines.flatMap((l) => (l.event === 'command' ? [l.command] : []));
      assert.deepEqual(commands.map((c) => c.t), ['live', 'click', 'text', 'set', 'key'], tk.output());
      const click = commands[1] as { x: number; y: number };
      assert.ok(Math.abs(click.x - 160) <= 3 && Math.abs(click.y - 180) <= 3, `the tap in frame coordinates: ${JSON.stringify(click)}`);
      assert.deepEqual(commands.slice(2), [{ t: 'text', text: 'K7Q2' }, { t: 'set', value: 'K7Q2' }, { t: 'key', key: 'Enter' }]);
      assert.deepEqual(lines.at(-1), { event: 'ended', reason: 'done' });

      // Nothing is left open; the notice, tapped again, says the take-over ended and stays in the app.
      const active = expectStatus(await call<unknown[]>(server, 'GET', '/api/takeover/active', undefined, { cookie }), 200, 'open take-overs');
      assert.deepEqual(active.body, []);
      await page.goto(`${server.baseUrl}/app`);
      await openNotifications(page);
      const again = page.locator('#inbox li[data-type="takeover"]').first();
      await again.locator('.inbox-open').click();
      await again.locator('.inbox-note', { hasText: 'This take-over has ended.' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/app');
      assert.deepEqual(owner.problems, []);
    } finally {
      if (tk.running()) await tk.stop();
    }
  });
});

/** The owner adds the agent without a key ("Add agent"), and the CLI pairs with the code the app shows. */
async function pairAgent(page: Page, server: ServerProcess, name: string): Promise<AgentCli> {
  await goTo(page, 'agents');
  await page.fill('#agent-name', name);
  await page.click('#agent-create-button');
  const code = (await page.locator('#agent-pairing-code').textContent()) ?? '';
  const agent = await AgentCli.pair(server.url, code, name);
  await page.locator('#agent-created', { hasText: `${name} is paired.` }).waitFor({ timeout: 15_000 });
  return agent;
}

/**
 * The CLI is waiting on an approval (`approve` without a plan step): the owner finds its card on the
 * phone while the CLI still runs, and approves it with the passkey or denies it. Answers the card's
 * txn_id and what the CLI printed when it ended.
 */
async function answerWaitingApproval(page: Page, waiting: Promise<CliResult>, answer: 'approve' | 'deny'): Promise<{ txnId: string; result: CliResult }> {
  let ended = false;
  void waiting.then(() => { ended = true; });
  await goTo(page, 'requests');
  const card: Locator = page.locator('#pending article.agent_approval:not(.done)', { hasText: 'Pay now' });
  await card.waitFor({ state: 'visible', timeout: 20_000 });
  const txnId = (await card.getAttribute('data-txn')) ?? '';
  assert.match(txnId, /^t_/);
  assert.match((await card.locator('.category').textContent()) ?? '', /^Money/);
  assert.equal(ended, false, 'the CLI waits for the owner');
  const answered = page.locator(`#pending article.done[data-txn="${txnId}"]`);
  await card.locator(`button.${answer}`).click();
  await answered.waitFor({ timeout: 15_000 });
  return { txnId, result: await waiting };
}

/** A screen the agent "sees": a checkout page with a code to read, as a JPEG from Chromium's screenshot. */
async function renderScreen(browser: Browser, size: { width: number; height: number }): Promise<Buffer> {
  const context = await browser.newContext({ viewport: size });
  try {
    const page = await context.newPage();
    await page.setContent('<body style="margin:0;font:24px sans-serif;background:#f4f1ea"><h1 style="margin:24px">Checkout</h1><p style="margin:24px">Type the code: <b style="letter-spacing:6px">K7Q2</b></p><input style="margin:24px;font-size:24px" placeholder="Security code"></body>');
    return await page.screenshot({ type: 'jpeg', quality: 80 });
  } finally {
    await context.close();
  }
}

/** The JSON lines the take-over agent printed so far. */
function linesOf(child: Child): TakeoverAgentLine[] {
  return child.stdout().split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as TakeoverAgentLine);
}
