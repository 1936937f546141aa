import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type OwnerTab, expectNoError, goTo, openOwnerTab, signUp } from './helpers/owner-app.ts';

// Once the agent package is published, the operator sets AGENT_PACKAGE (decisions §26) and every
// command the owner app prints installs the tool from the registry under that name instead of the
// service's own download: the steps (told by GET /api/agent-tool) and the pairing card.

let server: ServerProcess;
let browser: Browser;
let tab: OwnerTab | undefined;

before(async () => {
  browser = await launchChromium('owner app with AGENT_PACKAGE');
  server = await startServer({ env: { DATABASE_URL: '', AGENT_PACKAGE: '@mandate/agent' } });
});

after(async () => {
  await tab?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
});

test('with AGENT_PACKAGE set, the steps and the pairing card run the tool from that package', { timeout: 120_000 }, async () => {
  tab = await openOwnerTab(browser);
  const { page } = tab;
  await signUp(page, server.baseUrl, `agent-package.${Date.now()}@example.com`);
  await goTo(page, 'agents');
  await page.locator('details.cli summary').click();
  const program = 'npx --yes --package=@mandate/agent mandate-agent';
  const firstStep = page.locator('#agent-cli-steps .command code').first();
  await page.waitForFunction((expected) => document.querySelector('#agent-cli-steps .command code')?.textContent === expected, `${program} pair CODE --service ${server.baseUrl}`);
  assert.equal(await firstStep.textContent(), `${program} pair CODE --service ${server.baseUrl}`);
  assert.match((await page.locator('#agent-cli-steps').textContent()) ?? '', /from the npm registry \(@mandate\/agent\)/);

  await page.fill('#agent-name', 'registry bot');
  await page.click('#agent-create-button');
  const code = (await page.locator('#agent-pairing-code').textContent()) ?? '';
  const card = page.locator('#agent-created');
  assert.equal(await card.locator('.command code', { hasText: 'mandate-agent pair' }).textContent(), `${program} pair ${code} --service ${server.baseUrl}`);
  assert.doesNotMatch((await card.textContent()) ?? '', /download\/agent/);
  await expectNoError(page);
  assert.deepEqual(tab.problems, []);
});
