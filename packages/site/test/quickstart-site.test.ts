import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type Child, runTs } from '../../server/test/helpers/child-process.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import express from 'express';
import { createVerifier } from '../src/index.ts';
import { requireAgent } from '../src/express.ts';

// Issue 27, item 11: the quickstart sites (examples/quickstart/site.ts and site-local.ts, quoted by
// docs/sites/quickstart.md) answer a request without Mandate headers as the SDK does in the demo
// shop: 401 `invalid_request` with an `error_description` saying what is missing and what to send.
// No Mandate is needed for that answer, so none runs here (MANDATE_URL points where nothing listens).

const NO_PASS = 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>';

describe('a request without Mandate headers', () => {
  const children: Child[] = [];
  after(async () => {
    for (const c of children) await c.stop();
  });

  it('the site SDK (as the demo shop uses it) says what is missing and what to send', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const verifier = createVerifier({ mode: 'cloud', serviceUrl: nowhere, site: 'shop.example', publicBaseUrl: 'http://shop.example', onError: () => {} });
    const app = express();
    app.get('/products', requireAgent(verifier, { scope: 'list' }), (_req, res) => void res.json({ products: [] }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const res = await fetch(`http://127.0.0.1:${port}/products`);
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { error: 'invalid_request', error_description: NO_PASS });
    } finally {
      await new Promise((resolve) => server.close(resolve));
      verifier.close();
    }
  });

  for (const script of ['site.ts', 'site-local.ts']) {
    it(`examples/quickstart/${script} answers the same 401 with its description`, { timeout: 60_000 }, async () => {
      const port = await freePort();
      const nowhere = `http://127.0.0.1:${await freePort()}`;
      const site = runTs(`examples/quickstart/${script}`, { env: { MANDATE_URL: nowhere, PORT: String(port), HOST: '127.0.0.1' } });
      children.push(site);
      await site.waitFor('listening on', 30_000);
      const res = await fetch(`http://127.0.0.1:${port}/listings`);
      assert.equal(res.status, 401);
      assert.deepEqual(await res.json(), { error: 'invalid_request', error_description: NO_PASS });
      // A forged pass is refused with a reason in words too (site.ts: Mandate unreachable, so 503 with one).
      const forged = await fetch(`http://127.0.0.1:${port}/listings`, { headers: { authorization: 'Bearer not.a.pass', dpop: 'not.a.proof' } });
      const body = await forged.json() as Record<string, unknown>;
      assert.equal(typeof body['error_description'], 'string', JSON.stringify(body));
    });
  }
});
