import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgentJwt } from '@mandate/protocol';
import type { Browser, Page, Request } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { startPushService, type PushServiceStandIn, type SubscriptionJson } from '../../server/test/helpers/stand-ins/push-service.ts';
import { call, expectStatus } from '../../server/test/helpers/over-http.ts';
import { until } from '../../server/test/helpers/until.ts';
import { type AgentKey, agentKey } from './helpers/agent-runner.ts';
import {
  type OwnerTab, addPasskey, createAgent, expectNoError, expectNoSidewaysScroll, goTo, openNotifications, openOwnerTab, requestCard, sessionCookie, signUp,
} from './helpers/owner-app.ts';
import { type AppWorker, appWorker, changeSubscriptionInWorker, clickInWorker, standInPushService, waitForNotifications } from './helpers/push-worker.ts';

// Notifications end to end: the service as its own process sending web pushes to a push-service
// stand-in (which decrypts them as a browser would), and Chromium as the owner's phone. What the
// stand-in receives is then delivered to the app's real service worker through the DevTools
// protocol, and the notifications it shows are read back from the page. The tests build on each
// other, in order.

let server: ServerProcess;
let browser: Browser;
let pushService: PushServiceStandIn;
let subscription: SubscriptionJson;
let phone: OwnerTab;
let worker: AppWorker;
let key: AgentKey;
let agentId = '';
let cookie = '';
/** What the service worker asked of the service (POST /api/sw/...), with the answer's status. */
const workerReports: { path: string; status: number | undefined }[] = [];

before(async () => {
  [browser, pushService, key] = await Promise.all([launchChromium('push notifications'), startPushService(), agentKey()]);
  // Loopback is allowed for the stand-in's http://127.0.0.1 endpoints (decisions §24).
  server = await startServer({ env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true' } });
  subscription = pushService.newSubscription('phone');
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await pushService?.close();
  key?.remove();
});

type Payload = { type: string; id: string; title: string; body: string; url: string; txn_id?: string };

/** The next payload of `type` the stand-in decrypted for the phone's subscription. */
async function received(type: string, match: (p: Payload) => boolean = () => true): Promise<Payload> {
  return until(`a "${type}" push at the push service`, () => (pushService.received(subscription) as Payload[]).find((p) => p.type === type && match(p)), {
    ms: 20_000,
    describe: () => `received ${JSON.stringify(pushService.received(subscription))}; rejected ${JSON.stringify(pushService.rejections)}\n${server.logs().slice(-2000)}`,
  });
}

/** `work`, or its failure with what the service logged (a 5xx behind a page's error shows there). */
async function withServerLogs<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\nservice logs:\n${server.logs().slice(-4000)}`);
  }
}

async function askForAccess(site: string): Promise<string> {
  const res = await call<{ txn_id: string }>(server, 'POST', '/api/v1/authz-requests', { agent_id: agentId, site, scopes: ['list'], agent_jwt: await createAgentJwt(key.privateKey, agentId) });
  expectStatus(res, 200, 'access request');
  return res.body.txn_id;
}

const devices = async () => (await call<{ id: string; kind: string; name: string }[]>(server, 'GET', '/api/devices', undefined, { cookie })).body;

test('no prompt on opening the app; after the first passkey the app offers notifications, and one tap subscribes this browser', { timeout: 60_000 }, async () => {
  phone = await openOwnerTab(browser);
  const { page, context } = phone;
  context.on('requestfinished', (r: Request) => void recordWorkerReport(r));
  context.on('requestfailed', (r: Request) => void recordWorkerReport(r));
  await context.grantPermissions(['notifications'], { origin: server.baseUrl });
  await standInPushService(context, subscription);
  await signUp(page, server.baseUrl, `push.${Date.now()}@example.com`);
  cookie = await sessionCookie(context, server.baseUrl);
  worker = await appWorker(phone.cdp, server.baseUrl);
  assert.equal(await page.evaluate(() => (window as unknown as { permissionAsks: number }).permissionAsks), 0, 'no permission prompt on load');
  assert.equal(await page.locator('#push-offer').count(), 0, 'no offer before there is a passkey');

  await addPasskey(page, 'Test phone');
  const offer = page.getByRole('region', { name: 'Get requests on this device' });
  await offer.waitFor();
  assert.equal(await page.evaluate(() => (window as unknown as { permissionAsks: number }).permissionAsks), 0, 'the offer itself does not prompt');
  await offer.getByRole('button', { name: 'Turn on notifications' }).click();
  await Promise.race([offer.waitFor({ state: 'detached' }), offer.locator('.card-error').waitFor()]);
  if (await offer.count()) assert.fail(`the offer stayed: ${await offer.textContent()}`);
  await expectNoError(page);
  assert.equal(await page.evaluate(() => (window as unknown as { permissionAsks: number }).permissionAsks), 1, 'the prompt came with the tap');

  const webpush = (await devices()).filter((d) => d.kind === 'webpush');
  assert.equal(webpush.length, 1, 'the server lists the browser as a webpush device');
  assert.match(webpush[0]?.name ?? '', /^Chrome on /);
  const item = page.locator(`#devices li[data-device="${webpush[0]?.id}"]`);
  assert.match((await item.textContent()) ?? '', /Browser notifications · this browser/);
  assert.match((await page.locator('#devices li[data-kind="passkey"]').textContent()) ?? '', /Test phone.*Passkey/);
  await page.locator('#push-card[data-state="on"]').waitFor();
  assert.match((await page.locator('#push-state').textContent()) ?? '', /^On/);
});

/**
 * Delivers a push to the worker and waits for its "push-received" report. In CI (both test lanes
 * busy) a push delivered through the DevTools protocol was not shown within 10 s, once right after the
 * worker handled a click and once as the first approval push (2026-12-06: only the test notification
 * was showing); the cause was not found (alone and beside two busy cores the test passed 12 times in a
 * row). A delivery the worker does not report within 5 s is made again, once; a push the worker
 * reported and did not show still fails the test.
 */
async function deliverReceived(payload: Payload): Promise<void> {
  const receivedCount = () => workerReports.filter((r) => r.path === '/api/sw/push-received').length;
  for (let attempt = 1; ; attempt++) {
    const before = receivedCount();
    await worker.deliver(payload);
    try {
      await until('the worker reported the push', () => (receivedCount() > before ? true : undefined), { ms: 5_000 });
      return;
    } catch (e) {
      if (attempt >= 2) throw e;
    }
  }
}

function recordWorkerReport(r: Request): void {
  const path = new URL(r.url()).pathname;
  if (!path.startsWith('/api/sw/')) return;
  void r.response().then((res) => workerReports.push({ path, status: res?.status() }), () => workerReports.push({ path, status: undefined }));
}

test('"Send a test notification" reaches the push service encrypted; delivered to the worker, it shows', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await page.getByRole('button', { name: 'Send a test notification' }).click();
  await page.locator('#push-test-result', { hasText: 'Sent to 1 device.' }).waitFor();
  const push = await received('test');
  assert.equal(typeof push.title, 'string');
  await worker.deliver(push);
  const [shown] = await waitForNotifications(page, 'the test notification', (list) => list.some((n) => n.tag === push.id));
  assert.equal(shown?.title, push.title);
  assert.equal(shown?.body, push.body);
  assert.deepEqual(shown?.actions, [], 'only requests have actions');
  await until('the worker counted the push', () => (workerReports.some((r) => r.path === '/api/sw/push-received') ? true : undefined));
});

test('an agent asks: the approval push shows with Approve and Deny; a tap opens the request, approving sends a dismiss that closes it', { timeout: 60_000 }, async () => {
  const { page } = phone;
  agentId = await createAgent(page, 'shopper', key.publicJwk);
  const txn = await askForAccess('shop.example');
  const push = await received('approval', (p) => p.txn_id === txn);
  assert.equal(push.url, `/app#requests/${txn}`);
  await deliverReceived(push);
  const list = await waitForNotifications(page, 'the approval notification', (l) => l.some((n) => n.tag === txn));
  const shown = list.find((n) => n.tag === txn);
  assert.equal(shown?.title, 'shopper asks for access to shop.example');
  assert.equal(shown?.body, push.body);
  assert.deepEqual(shown?.actions, [{ action: 'approve', title: 'Approve' }, { action: 'deny', title: 'Deny' }]);
  assert.equal(shown?.requireInteraction, true, 'a request stays until it is answered');
  assert.deepEqual(shown?.data, { url: `/app#requests/${txn}`, type: 'approval', id: push.id, txn_id: txn });
  assert.match(shown?.icon ?? '', /\/icon-192\.png$/);

  // The DevTools protocol cannot click a notification: a click made by script in the worker checks
  // that the handler closes it and sends the open app to the request (see clickInWorker). Where a
  // tap may lead, and what it may not, is checked in app-push-rules.test.ts.
  await goTo(page, 'agents');
  await clickInWorker(page, txn, 'deny');
  await page.waitForFunction((t) => location.hash === `#requests/${t}`, txn);
  const card = await requestCard(page, txn);
  await page.waitForFunction((t) => document.activeElement?.getAttribute('data-txn') === t, txn);
  assert.equal(await card.evaluate((n) => n.classList.contains('highlight')), true, 'the card is highlighted');
  assert.equal(await card.locator('.outcome').count(), 0, 'Deny only opened the card: nothing was answered');
  await waitForNotifications(page, 'the tapped notification closed', (l) => !l.some((n) => n.tag === txn));
  // Opening the request read the notifications about it.
  await until('the request\'s notification marked read', async () => {
    const inbox = await call<{ items: { txn_id?: string; read_at: string | null }[] }>(server, 'GET', '/api/notifications', undefined, { cookie });
    const row = inbox.body.items.find((i) => i.txn_id === txn);
    return row?.read_at ? true : undefined;
  });

  // Still showing on another device: the answer here closes it there.
  await deliverReceived(push);
  await waitForNotifications(page, 'the approval shown again', (l) => l.some((n) => n.tag === txn));
  await card.getByRole('button', { name: 'Approve' }).click();
  await withServerLogs(card.locator('.outcome.ok').waitFor());
  const dismiss = await received('dismiss', (p) => p.txn_id === txn);
  await worker.deliver(dismiss);
  await waitForNotifications(page, 'the dismissed notification closed', (l) => !l.some((n) => n.tag === txn));
  // The approval arriving late (after its own dismissal) opens no card, but a new push still shows.
  await worker.deliver(push);
  await worker.deliver({ type: 'test', id: 'n_after', title: 'After', body: 'x', url: '/app#account' });
  const after = await waitForNotifications(page, 'the push after the late approval', (l) => l.some((n) => n.tag === 'n_after'));
  assert.equal(after.some((n) => n.tag === txn), false, 'a late approval after its dismissal shows nothing');
  await expectNoError(page);
});

test('a push the worker cannot read is reported as an error and shows a plain notification, never a broken one', { timeout: 30_000 }, async () => {
  const { page } = phone;
  const before = workerReports.length;
  await worker.deliver('this is not JSON');
  const list = await waitForNotifications(page, 'the fallback notification', (l) => l.some((n) => n.tag === 'mandate-fallback'));
  assert.equal(list.find((n) => n.tag === 'mandate-fallback')?.title, 'Mandate');
  for (const n of list) assert.doesNotMatch(`${n.title} ${n.body}`, /undefined|null|\{/, 'no broken text');
  await worker.deliver({ type: 'party', id: 'n_x' });
  const reports = await until('the worker reported the errors', () => {
    const seen = workerReports.slice(before).filter((r) => r.path === '/api/sw/error');
    return seen.length >= 2 ? seen : undefined;
  });
  assert.deepEqual(reports.map((r) => r.status), [204, 204], 'the service took the reports');
});

/**
 * Marks every notification read through the API (a clicked button could race the list still
 * loading) and waits until the app's next refresh hides the count.
 */
async function markAllRead(page: Page): Promise<void> {
  expectStatus(await call(server, 'POST', '/api/notifications/read', {}, { cookie }), 200, 'mark all read');
  await goTo(page, 'requests');
  await page.locator('#unread-count').waitFor({ state: 'hidden', timeout: 15_000 });
}

test('an agent note: the bell counts it, the Notifications view lists it, "Mark all read" clears the count', { timeout: 60_000 }, async () => {
  const { page } = phone;
  const bell = page.locator('#bell');
  const count = page.locator('#unread-count');
  // A clean slate: earlier notifications (the new passkey, the new agent) are read first.
  await markAllRead(page);

  const note = await call(server, 'POST', '/api/v1/agent-notify', { agent_id: agentId, agent_jwt: await createAgentJwt(key.privateKey, agentId), title: 'Order placed', text: 'Two books, 24 EUR.' });
  expectStatus(note, 200, 'agent note');
  await page.locator('#unread-count', { hasText: /^1$/ }).waitFor({ timeout: 15_000 });
  assert.equal(await bell.getAttribute('aria-label'), 'Notifications, 1 unread');

  // By keyboard: the bell is a link in the header.
  await bell.focus();
  await page.keyboard.press('Enter');
  await page.locator('#view-notifications').waitFor({ state: 'visible' });
  assert.equal(await bell.getAttribute('aria-current'), 'page');
  const item = page.locator('#inbox li.unread[data-type="note"]', { hasText: 'Order placed' });
  await item.waitFor();
  assert.match((await item.textContent()) ?? '', /Two books, 24 EUR\..*Unread/);
  const order = await page.locator('#inbox li').evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-seq'))));
  assert.deepEqual(order, [...order].sort((a, b) => b - a), 'newest first');

  // The request of the earlier test was answered: its item says so instead of opening it.
  const answered = page.locator('#inbox li[data-type="approval"]').first();
  await answered.getByRole('button').click();
  await answered.locator('.inbox-note', { hasText: 'No longer waiting' }).waitFor();
  assert.equal(await page.locator('#view-notifications').isVisible(), true);

  await page.getByRole('button', { name: 'Mark all read' }).click();
  await count.waitFor({ state: 'hidden' });
  await page.locator('#inbox li.unread').first().waitFor({ state: 'detached' });
  assert.equal(await bell.getAttribute('aria-label'), 'Notifications');
  await expectNoError(page);
});

test('a count the service gave before "Mark all read" (a slow poll) never brings the badge back', { timeout: 60_000 }, async () => {
  const { page } = phone;
  await markAllRead(page);
  const note = await call(server, 'POST', '/api/v1/agent-notify', { agent_id: agentId, agent_jwt: await createAgentJwt(key.privateKey, agentId), text: 'slow poll' });
  expectStatus(note, 200, 'agent note');
  await page.locator('#unread-count', { hasText: /^1$/ }).waitFor({ timeout: 15_000 });
  // The next poll is held after the service answered it (unread 1), as on a slow network.
  let release: (() => void) | undefined;
  let holding = true;
  const held = new Promise<void>((heldNow) => {
    void page.route('**/api/me', async (route) => {
      if (!holding) return route.continue();
      holding = false;
      const response = await route.fetch();
      await new Promise<void>((r) => {
        release = r;
        heldNow();
      });
      await route.fulfill({ response });
    });
  });
  await held;
  await openNotifications(page);
  await page.getByRole('button', { name: 'Mark all read' }).click();
  await page.locator('#unread-count').waitFor({ state: 'hidden' });
  // Every state the badge takes from now on.
  await page.evaluate(() => {
    const badge = document.getElementById('unread-count') as HTMLElement;
    const seen: string[] = [];
    (window as unknown as { badgeSeen: string[] }).badgeSeen = seen;
    new MutationObserver(() => seen.push(badge.hidden ? 'hidden' : badge.textContent ?? '')).observe(badge, { attributes: true, childList: true, characterData: true, subtree: true });
  });
  // The stale answer arrives; the app asks again at once, and that answer (0) is what counts.
  const fresh = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/me');
  release?.();
  await fresh;
  await page.waitForFunction(() => document.getElementById('bell')?.getAttribute('aria-label') === 'Notifications');
  const seen = await page.evaluate(() => (window as unknown as { badgeSeen: string[] }).badgeSeen);
  assert.deepEqual(seen.filter((s) => s !== 'hidden'), [], `the badge came back: ${seen.join(', ')}`);
  await page.unrouteAll({ behavior: 'wait' });
  await expectNoError(page);
});

test('the inbox pages: "Load more" brings the older ones, newest first, none twice', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await markAllRead(page);
  // Past one page (30) of notifications.
  for (let i = 0; i < 28; i++) {
    const note = await call(server, 'POST', '/api/v1/agent-notify', { agent_id: agentId, agent_jwt: await createAgentJwt(key.privateKey, agentId), text: `step ${i}` });
    expectStatus(note, 200, 'agent note');
  }
  // Counted first, so the app does not refresh the list under the test's hands.
  await goTo(page, 'requests');
  await page.locator('#unread-count', { hasText: /^28$/ }).waitFor({ timeout: 15_000 });
  await openNotifications(page);
  await page.locator('#inbox li', { hasText: 'step 27' }).waitFor();
  const items = page.locator('#inbox li');
  assert.equal(await items.count(), 30, 'one page');
  await page.getByRole('button', { name: 'Load more' }).click();
  await page.locator('#inbox-more').waitFor({ state: 'hidden' });
  const seqs = await items.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-seq'))));
  assert.ok(seqs.length > 30, `older ones came: ${seqs.length}`);
  assert.equal(new Set(seqs).size, seqs.length, 'none twice');
  assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a), 'newest first');
  await page.locator('#inbox li', { hasText: 'Order placed' }).waitFor();
});

test('settings: requests cannot be turned off while agents exist (the service says why); quiet hours are kept in this browser\'s time zone', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'account');
  const form = page.locator('#notify-settings');
  await form.waitFor();
  const approvals = form.getByRole('checkbox', { name: 'Requests from your agents' });
  assert.equal(await approvals.isChecked(), true);
  await approvals.uncheck();
  await form.getByRole('button', { name: 'Save' }).click();
  await page.locator('#notify-settings-error').waitFor({ state: 'visible' });
  assert.match((await page.locator('#notify-settings-error').textContent()) ?? '', /agent/i);
  assert.equal(await approvals.isChecked(), true, 'the form shows what is really set');

  await form.getByRole('checkbox', { name: 'Quiet hours' }).check();
  await form.getByLabel('From', { exact: true }).fill('22:30');
  await form.getByLabel('Until', { exact: true }).fill('06:45');
  assert.match((await page.locator('#quiet-hint').textContent()) ?? '', /still arrive, silently/);
  await form.getByRole('button', { name: 'Save' }).click();
  await page.locator('#notify-settings-saved').waitFor({ state: 'visible' });
  const tz = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  const saved = await call<{ approvals: boolean; quiet_hours: unknown }>(server, 'GET', '/api/settings/notifications', undefined, { cookie });
  assert.deepEqual(saved.body.quiet_hours, { start: '22:30', end: '06:45', tz });
  assert.equal(saved.body.approvals, true);
});

test('turning notifications off removes this browser from the devices and drops its subscription', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await goTo(page, 'account');
  await page.getByRole('button', { name: 'Turn off notifications' }).click();
  await page.locator('#push-card[data-state="off"]').waitFor();
  assert.deepEqual((await devices()).filter((d) => d.kind === 'webpush'), []);
  assert.equal(await page.evaluate(async () => (await (await navigator.serviceWorker.ready).pushManager.getSubscription()) === null), true);
  assert.equal(await page.getByRole('button', { name: 'Turn on notifications' }).isVisible(), true);
});

test('when the browser renews the subscription the worker registers the new one; when it cannot, it reports the loss', { timeout: 30_000 }, async () => {
  const { page } = phone;
  const before = workerReports.length;
  await changeSubscriptionInWorker(page, null);
  await until('a subscription-lost report', () => (workerReports.slice(before).some((r) => r.path === '/api/sw/subscription-lost') ? true : undefined));

  const renewed = pushService.newSubscription('renewed');
  await changeSubscriptionInWorker(page, renewed);
  const device = await until('the renewed subscription registered', async () => (await devices()).find((d) => d.kind === 'webpush'));
  assert.match(device.name, /^Chrome on /);
  const sent = await page.evaluate(async () => (await fetch('/api/push/test', { method: 'POST' })).json() as Promise<{ sent: number }>);
  assert.equal(sent.sent, 1);
  await until('a test push at the renewed subscription', () => ((pushService.received(renewed) as Payload[]).some((p) => p.type === 'test') ? true : undefined));
});

test('every screen fits a 360 px phone; no script errors, CSP violations or server errors', { timeout: 30_000 }, async () => {
  const { page } = phone;
  await page.setViewportSize({ width: 360, height: 740 });
  await goTo(page, 'account');
  await expectNoSidewaysScroll(page, 'account at 360 px');
  await openNotifications(page);
  await expectNoSidewaysScroll(page, 'notifications at 360 px');
  assert.deepEqual(phone.problems, []);
  await phone.context.close();
});
