import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { directoryBody, ed25519Thumbprint, parseEd25519PublicJwk, signRequest } from '@mandate/protocol';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { type ServerProcess, startServer } from '../../server/test/helpers/server-process.ts';
import { expectNoSidewaysScroll } from './helpers/owner-app.ts';

const PHONE = { width: 390, height: 844 } as const;

/** /tools/check-agent in Chromium at phone width: the forms work and nothing is wider than the screen. */
describe('/tools/check-agent in Chromium at 390 px', () => {
  let server: ServerProcess;
  let browser: Browser;
  let directory: Server;
  let agentUrl: string;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = parseEd25519PublicJwk(publicKey.export({ format: 'jwk' }));
  const keyid = ed25519Thumbprint(jwk);
  before(async () => {
    // A foreign agent's directory on loopback, with a long path so the address must wrap on a phone.
    directory = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/http-message-signatures-directory+json' });
      res.end(directoryBody([jwk]));
    });
    await new Promise<void>((r) => directory.listen(0, '127.0.0.1', r));
    agentUrl = `http://127.0.0.1:${(directory.address() as AddressInfo).port}/agents/a-very-long-agent-directory-name-that-does-not-fit/${'x'.repeat(40)}`;
    server = await startServer({ name: 'check-agent-page', env: { OUTBOUND_ALLOW_LOOPBACK: 'true' } });
    browser = await launchChromium('check-agent page');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((r) => directory.close(r));
  });

  it('looks up an address and checks a pasted request; fits the screen before and after', async () => {
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1 });
    try {
      const page = await context.newPage();
      await page.goto(`${server.baseUrl}/tools/check-agent`);
      await expectNoSidewaysScroll(page, 'the empty page');

      await page.fill('#agent', agentUrl);
      await Promise.all([page.waitForURL(/\?agent=/), page.click('form[method="get"] button')]);
      assert.equal(await page.textContent('.outcome'), 'found');
      assert.ok((await page.textContent('.tool-result'))?.includes(keyid));
      await expectNoSidewaysScroll(page, 'a found directory');

      const now = Math.floor(Date.now() / 1000);
      const headers = signRequest({ authority: 'shop.example', signatureAgent: agentUrl, key: { privateKey, keyid }, created: now, lifetimeSec: 60 });
      const pasted = ['GET /basket HTTP/1.1', 'Host: shop.example', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\n');
      await page.fill('#request', pasted);
      await Promise.all([page.waitForLoadState('load'), page.click('form[method="post"] button')]);
      await page.waitForSelector('.outcome');
      assert.equal(await page.textContent('.outcome'), 'verified');
      assert.equal(await page.inputValue('#request'), pasted, 'the pasted request stays in the form');
      await expectNoSidewaysScroll(page, 'a verified request');
    } finally {
      await context.close();
    }
  });
});
