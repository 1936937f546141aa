import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { runNode } from '../../server/test/helpers/child-process.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { expectNoError, goTo, openOwnerTab, signUp } from './helpers/owner-app.ts';

// Adding an agent by following the command-line steps the app shows: the real `mandate-agent` bin
// makes the key, the owner pastes the printed public key in the app, the agent records the id the
// app shows, asks for access and waits while the owner approves on the page.

const BIN = fileURLToPath(new URL('../../agent/bin/mandate-agent.js', import.meta.url));

let server: ServerProcess;
let browser: Browser;
let dir = '';

before(async () => {
  browser = await launchChromium('owner app with the agent CLI');
  server = await startServer({ env: { DATABASE_URL: '' } });
  dir = mkdtempSync(join(tmpdir(), 'mandate-app-cli-'));
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): { done: Promise<Run>; stderr: () => string } {
  const child = runNode('mandate-agent', [BIN, ...args, '--dir', join(dir, 'agent')], { env: { MANDATE_PASSWORD: '' } });
  const done = child.exited.then((code): Run => ({ code, stdout: child.stdout(), stderr: child.stderr() }));
  return { done, stderr: child.stderr };
}

test('the app shows the command-line steps for this service; the key mandate-agent prints is pasted, the id recorded, and the agent gets its access', { timeout: 150_000 }, async () => {
  const tab = await openOwnerTab(browser);
  const { page } = tab;
  await signUp(page, server.baseUrl, `cli.${Date.now()}@example.com`);
  await page.click('#passkey-setup-button');
  await page.locator('#passkey-setup').waitFor({ state: 'hidden' });

  // The steps name this service and the agent's name as typed.
  await goTo(page, 'agents');
  await page.fill('#agent-name', 'cli bot');
  await page.locator('details.cli summary').click();
  const steps = page.locator('#agent-cli-steps');
  await steps.waitFor({ state: 'visible' });
  const program = `npx --yes --package=${server.baseUrl}/download/agent mandate-agent`;
  assert.ok(((await steps.textContent()) ?? '').includes(`${program} init --service ${server.baseUrl} --name 'cli bot'`));
  assert.match((await steps.textContent()) ?? '', /never put a password on the command line/);

  // Step 1 on the agent's machine. (The test talks to 127.0.0.1 directly: same service.)
  const init = await cli(['init', '--service', server.url, '--name', 'cli bot', '--json']).done;
  assert.equal(init.code, 0, init.stderr);
  const { public_jwk: publicJwk } = JSON.parse(init.stdout) as { public_jwk: Record<string, string> };
  assert.equal(publicJwk.d, undefined, 'only the public key is printed');

  // Step 2 in the app; step 3 with the id it shows.
  await page.fill('#agent-key', JSON.stringify(publicJwk));
  await page.click('#agent-create-button');
  const created = page.locator('#agent-created');
  await created.waitFor({ state: 'visible' });
  const setId = (await created.locator('.command code').textContent()) ?? '';
  const agentId = setId.startsWith(`${program} set-id `) ? /set-id (ag_[a-z0-9]+)$/.exec(setId)?.[1] : undefined;
  assert.ok(agentId, setId);
  const recorded = await cli(['set-id', agentId]).done;
  assert.equal(recorded.code, 0, recorded.stderr);

  // The agent asks and waits; the owner approves on the page.
  const request = cli(['request', '--site', 'shop.example', '--scopes', 'list,orders:read', '--wait', '--json']);
  await goTo(page, 'requests');
  const card = page.locator('#pending article', { hasText: 'cli bot asks for access to shop.example' });
  await card.waitFor({ timeout: 20_000 });
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.locator('.outcome.ok').waitFor();
  const answered = await request.done;
  assert.equal(answered.code, 0, `${answered.stdout}\n${answered.stderr}`);
  assert.match(answered.stderr, /Waiting for the owner/, 'the agent showed that it waited');

  const token = await cli(['token', '--site', 'shop.example', '--json']).done;
  assert.equal(token.code, 0, token.stderr);
  assert.deepEqual((JSON.parse(token.stdout) as { scope: string[] }).scope, ['list', 'orders:read']);
  await expectNoError(page);
  assert.deepEqual(tab.problems, []);
  await tab.context.close();
});
