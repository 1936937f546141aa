import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { runNode } from '../../server/test/helpers/child-process.ts';
import { type FreshMachine, freshMachine, showShellRun } from '../../server/test/helpers/fresh-machine.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { type OwnerTab, expectNoError, expectNoSidewaysScroll, goTo, openOwnerTab, screenshot, signUp } from './helpers/owner-app.ts';

// Adding an agent on a 360 px phone: "Add agent" with no key shows a one-time pairing code and the
// command for the agent's machine, in view; that command, run as printed on a machine with only Node
// and npm (an empty folder outside the repository, a fresh npm cache: it fetches the agent tool from
// the service, decisions §26), pairs the agent, and the app says so. Pasting a key instead shows the
// set-id command in view.

const BIN = fileURLToPath(new URL('../../agent/bin/mandate-agent.js', import.meta.url));
const SMALL_PHONE = { width: 360, height: 740 } as const;

let server: ServerProcess;
let browser: Browser;
let tab: OwnerTab | undefined;
let dir = '';
let machine: FreshMachine | undefined;

before(async () => {
  browser = await launchChromium('owner app pairing');
  server = await startServer({ env: { DATABASE_URL: '' } });
  dir = mkdtempSync(join(tmpdir(), 'mandate-app-pairing-'));
  machine = freshMachine();
});

after(async () => {
  await tab?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  machine?.remove();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function cli(args: string[]): Promise<Run> {
  const child = runNode('mandate-agent', [BIN, ...args], { env: { MANDATE_PASSWORD: '' } });
  const code = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/** The whole element is on screen: not below the fold, not under the top bar or the phone's tab bar. */
async function expectInView(page: Page, locator: Locator, what: string): Promise<void> {
  const box = await locator.boundingBox();
  assert.ok(box, `${what} is shown`);
  const free = await page.evaluate(() => ({
    top: document.querySelector('.topbar')?.getBoundingClientRect().bottom ?? 0,
    bottom: document.getElementById('tabs')?.getBoundingClientRect().top ?? window.innerHeight,
  }));
  assert.ok(free.bottom < 740, 'the tab bar sits at the bottom of the phone screen');
  assert.ok(box.y >= free.top - 1 && box.y + box.height <= free.bottom + 1, `${what} is in view: y ${box.y}..${box.y + box.height}, uncovered ${free.top}..${free.bottom}`);
}

test('on a 360 px phone, "Add agent" without a key shows a pairing code in view, and the printed command pairs the agent', { timeout: 150_000 }, async () => {
  tab = await openOwnerTab(browser, SMALL_PHONE);
  const { page } = tab;
  await signUp(page, server.baseUrl, `pairing.${Date.now()}@example.com`);

  // The help leads with the code and names the field as the form does.
  await goTo(page, 'agents');
  await page.locator('details.cli summary').click();
  const program = `npx --yes --package=${server.baseUrl}/download/agent mandate-agent`;
  const steps = (await page.locator('#agent-cli-steps').textContent()) ?? '';
  assert.ok(steps.includes(`leave the key empty and press "Add agent"`), steps);
  const stepLines = await page.locator('#agent-cli-steps .command code').allTextContents();
  assert.equal(stepLines[0], `${program} pair CODE --service ${server.baseUrl}`);
  assert.equal(stepLines[2], `${program} set-id ag_…`);
  assert.match(steps, /downloads the agent tool \(mandate-agent\) from this Mandate service and runs it; it needs Node\.js 20 or later/);
  assert.ok(steps.indexOf('mandate-agent pair') < steps.indexOf('mandate-agent init'), 'pairing comes first');
  assert.match(steps, /under "Its public key"/);
  assert.doesNotMatch(steps, /Paste its public key|same name|--email/);
  assert.match((await page.locator('#agent-key-hint').textContent()) ?? '', /Leave it empty/);

  await page.fill('#agent-name', 'phone bot');
  await page.click('#agent-create-button');
  const code = page.locator('#agent-pairing-code');
  await code.waitFor({ state: 'visible' });
  const codeText = (await code.textContent()) ?? '';
  assert.match(codeText, /^[A-HJ-KMNP-Z2-9]{4}-[A-HJ-KMNP-Z2-9]{4}$/);
  const created = page.locator('#agent-created');
  const pairLine = (await created.locator('.command code', { hasText: 'mandate-agent pair' }).textContent()) ?? '';
  assert.equal(pairLine, `${program} pair ${codeText} --service ${server.baseUrl}`);
  assert.match((await created.textContent()) ?? '', /downloads the agent tool \(mandate-agent\) from this Mandate service and runs it; it needs Node\.js 20 or later/);
  await expectInView(page, created, 'the pairing code and its command');
  await expectNoSidewaysScroll(page, 'the pairing code');
  await screenshot(page, 'pairing-code');
  await expectNoError(page);

  // On the agent's machine: exactly the printed line.
  assert.ok(machine);
  const paired = await machine.sh(pairLine);
  assert.equal(paired.code, 0, showShellRun(paired));
  assert.match(paired.stdout, /Paired: agent ag_[a-z0-9]+ \("phone bot"\)/);
  const agentId = /agent (ag_[a-z0-9]+)/.exec(paired.stdout)?.[1] ?? '';

  // The app notices by itself and shows the agent.
  await created.locator('text=phone bot is paired.').waitFor({ timeout: 15_000 });
  assert.match((await created.textContent()) ?? '', new RegExp(agentId));
  await page.locator(`#agents article`, { hasText: 'phone bot' }).waitFor();
  await expectInView(page, created, 'the paired notice');
  const status = await cli(['status', '--dir', join(machine.home, '.mandate-agent')]);
  assert.equal(status.code, 0, status.stderr);

  // The code worked once.
  const again = await machine.sh(pairLine.replace(' pair ', ` pair --dir ${join(dir, 'second')} `));
  assert.equal(again.code, 1, showShellRun(again));
  assert.match(again.stderr, /unknown, used or expired pairing code/);
  assert.deepEqual(tab.problems, []);
});

test('on the same phone, pasting a key shows the set-id command in view', { timeout: 120_000 }, async () => {
  assert.ok(tab);
  const { page } = tab;
  const init = await cli(['init', '--service', server.url, '--name', 'pasted bot', '--dir', join(dir, 'pasted'), '--json']);
  assert.equal(init.code, 0, init.stderr);
  const { public_jwk: publicJwk } = JSON.parse(init.stdout) as { public_jwk: Record<string, string> };
  await page.fill('#agent-name', 'pasted bot');
  await page.fill('#agent-key', JSON.stringify(publicJwk));
  await page.click('#agent-create-button');
  const created = page.locator('#agent-created');
  await created.locator('text=pasted bot is added.').waitFor();
  const setId = created.locator('.command', { hasText: `npx --yes --package=${server.baseUrl}/download/agent mandate-agent set-id ag_` });
  await page.locator('#agents article', { hasText: 'pasted bot' }).waitFor();
  await expectInView(page, setId, 'the set-id command');
  await screenshot(page, 'agent-added-set-id');
  await expectNoError(page);
  assert.deepEqual(tab.problems, []);
});
