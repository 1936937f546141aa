import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { WebSocket } from 'ws';
import { createAgentJwt, generateAgentKeyPair } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type OwnerTab, expectNoSidewaysScroll, openOwnerTab, sessionCookie, signUp } from './helpers/owner-app.ts';

// The take-over page on a phone (decisions §21): the agent's frame is shown, a tap on it becomes a
// click in the frame's own coordinates, the text box and keys reach the agent, and the agent's done
// ends the page.

let server: ServerProcess;
let browser: Browser;
let tab: OwnerTab | undefined;

before(async () => {
  browser = await launchChromium('take-over page');
  server = await startServer({ env: { DATABASE_URL: '' } });
});

after(async () => {
  await tab?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
});

test('a frame is shown; a tap becomes a click at the frame\'s scale; text and keys are sent; done ends the page', async () => {
  tab = await openOwnerTab(browser);
  const { page, context } = tab;
  await signUp(page, server.baseUrl, `takeover.${Date.now()}@example.com`);
  const cookie = await sessionCookie(context, server.baseUrl);

  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const agentRes = await fetch(`${server.url}/api/agents`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', origin: server.baseUrl }, body: JSON.stringify({ name: 'Shopper', jwk: publicJwk }) });
  assert.equal(agentRes.status, 200, await agentRes.clone().text());
  const agentId = ((await agentRes.json()) as { id: string }).id;
  const jwt = await createAgentJwt(privateKey, agentId);
  const tkRes = await fetch(`${server.url}/api/v1/takeover`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent_id: agentId, agent_jwt: jwt, url: 'https://shop.example/pay', reason: 'a captcha' }) });
  assert.equal(tkRes.status, 200, await tkRes.clone().text());
  const { takeover_id, agent_token } = (await tkRes.json()) as { takeover_id: string; agent_token: string };

  const agentEnd = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/v1/takeover/${takeover_id}/agent`, { headers: { authorization: `Bearer ${agent_token}` } });
  const got: Record<string, unknown>[] = [];
  agentEnd.on('message', (d) => got.push(JSON.parse(d.toString()) as Record<string, unknown>));
  await new Promise((resolve, reject) => { agentEnd.once('open', resolve); agentEnd.once('error', reject); });

  await page.goto(`${server.baseUrl}/app/takeover/${takeover_id}`);
  const waitFor = async (check: () => boolean, what: string) => {
    for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(check(), `${what}: ${JSON.stringify(got)}`);
  };
  await waitFor(() => got.some((m) => m.t === 'live'), 'the owner page connected');

  // A real JPEG, 800 x 400, drawn by the browser itself.
  const jpeg = await page.evaluate(() => {
    const c = document.createElement('canvas');
    c.width = 800;
    c.height = 400;
    const g = c.getContext('2d')!;
    g.fillStyle = '#3a7';
    g.fillRect(0, 0, 800, 400);
    return c.toDataURL('image/jpeg', 0.7).split(',')[1]!;
  });
  agentEnd.send(JSON.stringify({ t: 'frame', data: jpeg, w: 800, h: 400 }));
  agentEnd.send(JSON.stringify({ t: 'url', url: 'https://shop.example/pay' }));
  const img = page.locator('#tk-frame');
  await img.waitFor({ state: 'visible' });
  await page.waitForFunction(() => (document.getElementById('tk-frame') as HTMLImageElement).naturalWidth === 800);
  await page.locator('#tk-url', { hasText: 'shop.example/pay' }).waitFor();
  await expectNoSidewaysScroll(page, 'take-over page');

  const box = (await img.boundingBox())!;
  assert.ok(box.width <= 390 && box.width > 300, `the frame fits the phone: ${box.width}`);
  await img.tap({ position: { x: box.width * 0.25, y: box.height * 0.5 } });
  await waitFor(() => got.some((m) => m.t === 'click'), 'a click');
  const click = got.find((m) => m.t === 'click') as { x: number; y: number };
  assert.ok(Math.abs(click.x - 200) <= 3 && Math.abs(click.y - 200) <= 3, `scaled click ${JSON.stringify(click)}`);

  await page.fill('#tk-text', 'hello');
  await page.click('[data-send="text"]');
  await page.click('[data-send="set"]');
  await page.click('[data-key="Enter"]');
  await page.click('[data-scroll="400"]');
  await waitFor(() => got.some((m) => m.t === 'scroll'), 'text, set, key, scroll');
  assert.deepEqual(got.filter((m) => m.t !== 'live' && m.t !== 'click'), [{ t: 'text', text: 'hello' }, { t: 'set', value: 'hello' }, { t: 'key', key: 'Enter' }, { t: 'scroll', dy: 400 }]);

  agentEnd.send(JSON.stringify({ t: 'done' }));
  await page.locator('#tk-status', { hasText: 'taken over again' }).waitFor();
  assert.equal(await page.locator('#tk-cancel').isDisabled(), true);

  // The report of a failed take-over shows in the Activity view, with the ended take-over in the trail.
  const rep = await fetch(`${server.url}/api/v1/takeover/report`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent_id: agentId, agent_jwt: jwt, site: 'shop.example', kind: 'shadow_dom', detail: 'closed shadow root' }) });
  assert.equal(rep.status, 200, await rep.clone().text());
  await page.goto(`${server.baseUrl}/app#activity`);
  await page.locator('#takeover-reports li', { hasText: 'shop.example: shadow dom' }).waitFor();
  await page.locator('#activity li', { hasText: 'Take-over by Shopper ended: done' }).waitFor();
  await expectNoSidewaysScroll(page, 'activity with take-overs');
  assert.deepEqual(tab.problems, []);
});

test('signed out: the page sends you to the app; someone else\'s take-over: 404', async () => {
  const res = await fetch(`${server.url}/app/takeover/tk_aaaaaaaaaaaaaaaaaaaaaaaaaa`, { redirect: 'manual' });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get('location'), '/app');
  const cookie = await sessionCookie(tab!.context, server.baseUrl);
  const other = await fetch(`${server.url}/app/takeover/tk_aaaaaaaaaaaaaaaaaaaaaaaaaa`, { headers: { cookie }, redirect: 'manual' });
  assert.equal(other.status, 404);
});
