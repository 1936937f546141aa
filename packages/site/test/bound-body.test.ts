import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { FixedClock } from '../../server/src/clock.ts';
import { createVerifier, detailsDigestOf, requireAgent as nodeRequireAgent, type Verifier } from '../src/index.ts';
import { requireAgent as expressRequireAgent } from '../src/express.ts';
import { mandatePlugin, requireAgent as fastifyRequireAgent } from '../src/fastify.ts';
import { type Mandate, PUBLIC_BASE, SITE, agentRequest, agentWithPass, quiet, startMandate, stepupFor } from './helpers/mandate.ts';

// Step-ups bound to the request body (decisions §28, §29), in the three adapters and both modes,
// against a real Mandate over real HTTP. Each site serves:
//   POST /api/basket  scope checkout, action "pay the basket", bindBody, summary from the body
//   POST /api/tip     scope checkout, action "leave a tip", not bound (any details, or none, will do)

const PAY = 'pay the basket';
const TIP = 'leave a tip';
type Basket = { item?: unknown; quantity?: unknown };
const summaryOf = (body: unknown) => `${String((body as Basket).quantity)} × ${String((body as Basket).item)}, to the test shop`;

type Site = { url: string; close(): Promise<void> };

async function listen(server: Server): Promise<Site> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function nodeSite(verifier: Verifier): Promise<Site> {
  const basket = nodeRequireAgent(verifier, { scope: 'checkout', action: PAY, bindBody: true, summary: (req) => summaryOf((req as IncomingMessage & { body?: unknown }).body) }, (req, res) =>
    json(res, 200, { stepup: req.mandate.stepup, body: req.body }),
  );
  const tip = nodeRequireAgent(verifier, { scope: 'checkout', action: TIP }, (req, res) => json(res, 200, { stepup: req.mandate.stepup }));
  return listen(
    createServer((req, res) => {
      const handling = req.url === '/api/basket' ? basket(req, res) : req.url === '/api/tip' ? tip(req, res) : Promise.resolve(json(res, 404, {}));
      handling.catch(() => json(res, 500, { error: 'internal' }));
    }),
  );
}

async function expressSite(verifier: Verifier): Promise<Site> {
  const app = express();
  app.use(express.json());
  app.post('/api/basket', expressRequireAgent(verifier, { scope: 'checkout', action: PAY, bindBody: true, summary: (req) => summaryOf(req.body) }), (req, res) => {
    res.json({ stepup: req.mandate?.stepup, body: req.body as unknown });
  });
  app.post('/api/tip', expressRequireAgent(verifier, { scope: 'checkout', action: TIP }), (req, res) => {
    res.json({ stepup: req.mandate?.stepup });
  });
  return listen(createServer(app));
}

async function fastifySite(verifier: Verifier): Promise<Site> {
  const app = Fastify();
  await app.register(mandatePlugin);
  app.post('/api/basket', { preHandler: fastifyRequireAgent(verifier, { scope: 'checkout', action: PAY, bindBody: true, summary: (request) => summaryOf(request.body) }) }, async (request) => ({
    stepup: request.mandate?.stepup,
    body: request.body,
  }));
  app.post('/api/tip', { preHandler: fastifyRequireAgent(verifier, { scope: 'checkout', action: TIP }) }, async (request) => ({ stepup: request.mandate?.stepup }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

const FRAMEWORKS = { 'node:http': nodeSite, Express: expressSite, Fastify: fastifySite } as const;

const BASKET = '{"item":"Notebook","quantity":1}';
/** The same JSON value written another way: the canonical form, and so the digest, are the same. */
const BASKET_REWRITTEN = '{ "quantity": 1.0, "item": "Notebook" }';
const OTHER_BASKET = '{"item":"Notebook","quantity":10}';

describe('step-ups bound to the request body', () => {
  let m: Mandate;
  const verifiers: Verifier[] = [];
  before(async () => {
    m = await startMandate({ clock: new FixedClock(Date.UTC(2026, 10, 22, 12)) });
  });
  after(async () => {
    for (const v of verifiers) v.close();
    await m.close();
  });

  for (const [framework, makeSite] of Object.entries(FRAMEWORKS)) {
    for (const mode of ['cloud', 'local'] as const) {
      describe(`${framework}, ${mode} mode`, () => {
        let site: Site;
        before(async () => {
          const v = createVerifier({ mode, serviceUrl: m.url, site: SITE, publicBaseUrl: PUBLIC_BASE, now: () => m.clock.now(), onError: quiet });
          verifiers.push(v);
          site = await makeSite(v);
        });
        after(() => site.close());

        async function send(a: Awaited<ReturnType<typeof agentWithPass>>, path: string, body: string, o: { stepup?: string; contentType?: string } = {}) {
          const r = await agentRequest(m, a, { method: 'POST', path, ...(o.stepup === undefined ? {} : { stepup: o.stepup }) });
          const headers: Record<string, string> = { 'content-type': o.contentType ?? 'application/json' };
          for (const [k, value] of Object.entries(r.headers as Record<string, string>)) if (k !== 'host') headers[k] = value;
          const res = await fetch(site.url + path, { method: 'POST', headers, body });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        }

        it('without a step-up: 403 stepup_required with the action and the summary the site suggests', async () => {
          const r = await send(await agentWithPass(m), '/api/basket', BASKET);
          assert.deepEqual([r.status, r.body['error'], r.body['action'], r.body['summary']], [403, 'stepup_required', PAY, '1 × Notebook, to the test shop']);
        });

        it('a body that is not JSON: 400 invalid_request, before Mandate is asked', async () => {
          const a = await agentWithPass(m);
          const stepup = await stepupFor(m, a, PAY, { details_digest: detailsDigestOf({ item: 'Notebook', quantity: 1 }) });
          const r = await send(a, '/api/basket', BASKET, { stepup, contentType: 'text/plain' });
          assert.deepEqual([r.status, r.body['error']], [400, 'invalid_request']);
          const unused = await m.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: { stepup_token: stepup, site: SITE, action: PAY } });
          assert.equal(unused.json().valid, true, 'the step-up was not used up');
        });

        it('a step-up approved for another basket, or for no details: 403 stepup_wrong_details, not used up; for this basket (written any way): 200 once', async () => {
          const a = await agentWithPass(m);
          const stepup = await stepupFor(m, a, PAY, { details_digest: detailsDigestOf({ item: 'Notebook', quantity: 1 }) });
          const other = await send(a, '/api/basket', OTHER_BASKET, { stepup });
          assert.deepEqual([other.status, other.body['error']], [403, 'stepup_wrong_details'], JSON.stringify(other.body));

          const bare = await send(a, '/api/basket', BASKET, { stepup: await stepupFor(m, a, PAY) });
          assert.deepEqual([bare.status, bare.body['error']], [403, 'stepup_wrong_details'], 'a step-up without details does not cover a bound route');

          const ok = await send(a, '/api/basket', BASKET_REWRITTEN, { stepup });
          assert.deepEqual(ok, { status: 200, body: { stepup: true, body: { item: 'Notebook', quantity: 1 } } });
          const again = await send(a, '/api/basket', BASKET, { stepup });
          assert.deepEqual([again.status, again.body['error']], [401, 'stepup_used_or_expired']);
        });

        it('a route that binds nothing takes a step-up with details like any other', async () => {
          const a = await agentWithPass(m);
          const stepup = await stepupFor(m, a, TIP, { details_digest: detailsDigestOf({ tip: 5 }) });
          assert.deepEqual(await send(a, '/api/tip', '{"tip":6}', { stepup }), { status: 200, body: { stepup: true } });
        });
      });
    }
  }

  it('route options that no request could satisfy are a bug, thrown when the route is declared', () => {
    const v = createVerifier({ mode: 'cloud', serviceUrl: m.url, site: SITE, onError: quiet });
    assert.throws(() => expressRequireAgent(v, { scope: 'checkout', bindBody: true }), /bindBody .* needs an action/);
    assert.throws(() => fastifyRequireAgent(v, { summary: 'x' }), /summary .* needs an action/);
    assert.throws(() => nodeRequireAgent(v, { bindBody: true }, () => {}), /needs an action/);
  });

  it('verify(): a summary or digest that is not valid is the site\'s bug, answered 400 without asking Mandate', async () => {
    const v = createVerifier({ mode: 'cloud', serviceUrl: 'http://127.0.0.1:9', site: SITE, onError: quiet });
    const a = await agentWithPass(m);
    const request = await agentRequest(m, a, { method: 'POST', path: '/api/basket' });
    for (const route of [{ action: PAY, summary: 'x'.repeat(501) }, { action: PAY, summary: 'a\u202Eb' }, { action: PAY, detailsDigest: 'short' }]) {
      const r = await v.verify(request, route);
      assert.deepEqual(r.ok ? r : [r.status, r.error], [400, 'invalid_request'], JSON.stringify(route));
    }
  });
});
