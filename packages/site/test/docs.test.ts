import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runTs } from '../../server/test/helpers/child-process.ts';
import { docExamples, exampleProject, typecheck } from '../../server/test/helpers/doc-examples.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import { detailsDigestOf } from '../src/index.ts';
import { type AgentWithPass, type Mandate, RealClock, agentRequest, agentWithPass, startMandate, stepupFor } from './helpers/mandate.ts';

// docs/sites/sdk.md cannot rot: every block marked `<!-- example: <file>.ts -->` is written to a
// file as it stands and typechecked; those marked `(run)` are also started as servers, against a
// real Mandate, and called by an agent (they serve GET /orders with scope orders:read; the step-up
// example serves POST /orders/:id/pay).

const GUIDE = 'docs/sites/sdk.md';

describe(`${GUIDE} examples`, () => {
  let dir = '';
  const all = docExamples(GUIDE);

  before(() => {
    // Outside the repository, as a reader's project would be; node_modules links to this checkout's.
    dir = exampleProject('mandate-sdk-docs-', all);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the guide has its examples', () => {
    assert.deepEqual(
      all.filter((e) => e.run).map((e) => e.file),
      ['express.ts', 'fastify.ts', 'node-http.ts', 'express-stepup.ts', 'express-bound.ts', 'express-local.ts'],
    );
    assert.ok(all.length >= 9, `only ${all.length} examples`);
  });

  it('every example typechecks (strict, as this repository compiles)', () => {
    assert.deepEqual(typecheck(dir, all.map((e) => e.file)), []);
  });

  describe('the server examples run and protect their routes', () => {
    let m: Mandate;
    before(async () => {
      m = await startMandate({ clock: new RealClock() });
    });
    after(() => m.close());

    async function call(base: string, a: AgentWithPass | null, method: string, path: string, stepup?: string, body?: unknown) {
      const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
      if (a) {
        const r = await agentRequest(m, a, { method, path, base, ...(stepup === undefined ? {} : { stepup }) });
        for (const [k, v] of Object.entries(r.headers as Record<string, string>)) if (k !== 'host') headers[k] = v;
      }
      const res = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }

    for (const file of ['express.ts', 'fastify.ts', 'node-http.ts', 'express-stepup.ts', 'express-bound.ts', 'express-local.ts']) {
      it(file, async () => {
        const port = await freePort();
        const base = `http://127.0.0.1:${port}`;
        const server = runTs(join(dir, file), { env: { MANDATE_URL: m.url, SITE_ID: 'shop.example', PUBLIC_BASE_URL: base, PORT: String(port) }, cwd: dir });
        try {
          await server.waitFor('shop listening');
          if (file === 'express-stepup.ts') {
            const a = await agentWithPass(m, { scopes: ['pay'] });
            assert.equal((await call(base, a, 'POST', '/orders/7/pay')).status, 404, 'cheap check first');
            const refused = await call(base, a, 'POST', '/orders/42/pay');
            assert.deepEqual([refused.status, refused.body['error'], refused.body['action']], [403, 'stepup_required', 'pay order 42']);
            const paid = await call(base, a, 'POST', '/orders/42/pay', await stepupFor(m, a, 'pay order 42'));
            assert.deepEqual(paid, { status: 200, body: { paid: '19.90 EUR', agent: a.agent.id, stepup: true } });
            assert.equal((await call(base, a, 'POST', '/orders/42/pay')).status, 409, 'already paid');
          } else if (file === 'express-bound.ts') {
            const a = await agentWithPass(m, { scopes: ['checkout'] });
            const two = { product_id: 'p1', quantity: 2 };
            const refused = await call(base, a, 'POST', '/checkout', undefined, two);
            assert.deepEqual(
              [refused.status, refused.body['error'], refused.body['action'], refused.body['summary']],
              [403, 'stepup_required', 'buy 2 x Desk lamp for 39.80 EUR', '2 × Desk lamp, 39.80 EUR, to My Shop'],
            );
            const stepup = await stepupFor(m, a, 'buy 2 x Desk lamp for 39.80 EUR', { details_digest: detailsDigestOf(two) });
            const other = await call(base, a, 'POST', '/checkout', stepup, { product_id: 'p1', quantity: 2, gift: true });
            assert.deepEqual([other.status, other.body['error']], [403, 'stepup_wrong_details']);
            const bought = await call(base, a, 'POST', '/checkout', stepup, { quantity: 2, product_id: 'p1' });
            assert.deepEqual(bought, { status: 201, body: { bought: two, agent: a.agent.id } });
          } else {
            const none = await call(base, null, 'GET', '/orders');
            assert.deepEqual([none.status, none.body['error']], [401, 'invalid_request']);
            const lacking = await call(base, await agentWithPass(m, { scopes: ['list'] }), 'GET', '/orders');
            assert.deepEqual([lacking.status, lacking.body['error']], [403, 'insufficient_scope']);
            const a = await agentWithPass(m, { scopes: ['orders:read'] });
            const ok = await call(base, a, 'GET', '/orders');
            assert.deepEqual(ok, { status: 200, body: { orders: [], person: a.agent.owner.user.id, agent: a.agent.id } });
          }
        } finally {
          await server.stop();
        }
      });
    }
  });
});
