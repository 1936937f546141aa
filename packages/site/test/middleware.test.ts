import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { FixedClock } from '../../server/src/clock.ts';
import { createVerifier, requireAgent as nodeRequireAgent, type Verifier } from '../src/index.ts';
import { requireAgent as expressRequireAgent } from '../src/express.ts';
import { mandatePlugin, requireAgent as fastifyRequireAgent } from '../src/fastify.ts';
import { type Mandate, PUBLIC_BASE, SITE, agentRequest, agentWithPass, quiet, startMandate, stepupFor } from './helpers/mandate.ts';

// The three adapters, each serving the same two routes under /api over real HTTP, verified against a
// real Mandate: GET /api/orders (scope orders:read) and POST /api/orders/:id/pay (scope checkout,
// step-up "pay order <id>", only order 42 exists: the lookup runs before verification).

const ORDERS = new Set(['42']);
const payAction = (id: string) => `pay order ${id}`;

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
  const orders = nodeRequireAgent(verifier, { scope: 'orders:read' }, (req, res) => json(res, 200, { agent: req.mandate.agentId, stepup: req.mandate.stepup }));
  const pay = (id: string) =>
    nodeRequireAgent(verifier, { scope: 'checkout', action: payAction(id) }, (req, res) => json(res, 200, { agent: req.mandate.agentId, stepup: req.mandate.stepup }));
  return listen(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const m = /^\/api\/orders\/([^/]+)\/pay$/.exec(path);
      let handling: Promise<void>;
      if (req.method === 'GET' && path === '/api/orders') handling = orders(req, res);
      else if (req.method === 'POST' && m) {
        const id = m[1] ?? '';
        if (!ORDERS.has(id)) return json(res, 404, { error: 'no such order' }); // cheap check first
        handling = pay(id)(req, res);
      } else return json(res, 404, { error: 'not found' });
      handling.catch(() => json(res, 500, { error: 'internal' }));
    }),
  );
}

async function expressSite(verifier: Verifier): Promise<Site> {
  const app = express();
  const api = express.Router();
  api.get('/orders', expressRequireAgent(verifier, { scope: 'orders:read' }), (req, res) => {
    res.json({ agent: req.mandate?.agentId, stepup: req.mandate?.stepup });
  });
  api.post(
    '/orders/:id/pay',
    (req, res, next) => (ORDERS.has(String(req.params['id'])) ? next() : res.status(404).json({ error: 'no such order' })),
    expressRequireAgent(verifier, { scope: 'checkout', action: (req) => payAction(String(req.params['id'])) }),
    (req, res) => {
      res.json({ agent: req.mandate?.agentId, stepup: req.mandate?.stepup });
    },
  );
  app.use('/api', api); // mounted: the SDK must use originalUrl
  return listen(createServer(app));
}

async function fastifySite(verifier: Verifier): Promise<Site> {
  const app = Fastify();
  await app.register(mandatePlugin);
  await app.register(
    async (api) => {
      api.get('/orders', { preHandler: fastifyRequireAgent(verifier, { scope: 'orders:read' }) }, async (request) => ({ agent: request.mandate?.agentId, stepup: request.mandate?.stepup }));
      const orderId = (request: FastifyRequest) => (request.params as { id: string }).id;
      api.post<{ Params: { id: string } }>(
        '/orders/:id/pay',
        {
          preHandler: [
            async (request, reply) => {
              if (!ORDERS.has(request.params.id)) return reply.code(404).send({ error: 'no such order' });
            },
            fastifyRequireAgent(verifier, { scope: 'checkout', action: (request) => payAction(orderId(request)) }),
          ],
        },
        async (request) => ({ agent: request.mandate?.agentId, stepup: request.mandate?.stepup }),
      );
    },
    { prefix: '/api' },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

const FRAMEWORKS = { 'node:http': nodeSite, Express: expressSite, Fastify: fastifySite } as const;

describe('middleware', () => {
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

        /** Sends an agent request (pass, proof for the public URL, optional step-up) to the site over HTTP. */
        async function send(a: Awaited<ReturnType<typeof agentWithPass>> | null, method: string, path: string, stepup?: string) {
          const headers: Record<string, string> = {};
          if (a) {
            const r = await agentRequest(m, a, { method, path, ...(stepup === undefined ? {} : { stepup }) });
            for (const [k, value] of Object.entries(r.headers as Record<string, string>)) if (k !== 'host') headers[k] = value;
          }
          const res = await fetch(site.url + path, { method, headers });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        }

        it('no credentials: 401 {"error": "invalid_request"}', async () => {
          const r = await send(null, 'GET', '/api/orders');
          assert.equal(r.status, 401);
          assert.equal(r.body['error'], 'invalid_request');
          assert.equal(typeof r.body['error_description'], 'string');
        });

        it('a forged pass: 401 with the reason', async () => {
          const a = await agentWithPass(m);
          const { dpop = '' } = (await agentRequest(m, a, { path: '/api/orders' })).headers as Record<string, string>;
          const res = await fetch(`${site.url}/api/orders`, { headers: { authorization: 'Bearer x.y.z', dpop } });
          assert.equal(res.status, 401);
          assert.equal(((await res.json()) as { error: string }).error, 'invalid_token');
        });

        it('a pass without the scope: 403 insufficient_scope', async () => {
          const r = await send(await agentWithPass(m, { scopes: ['list'] }), 'GET', '/api/orders');
          assert.deepEqual([r.status, r.body['error']], [403, 'insufficient_scope']);
        });

        it('success: the handler runs with the verified result attached', async () => {
          const a = await agentWithPass(m, { scopes: ['orders:read'] });
          const r = await send(a, 'GET', '/api/orders');
          assert.deepEqual([r.status, r.body], [200, { agent: a.agent.id, stepup: false }]);
        });

        it('a sensitive route without step-up: 403 stepup_required naming the action', async () => {
          const r = await send(await agentWithPass(m), 'POST', '/api/orders/42/pay');
          assert.deepEqual([r.status, r.body['error'], r.body['action']], [403, 'stepup_required', 'pay order 42']);
        });

        it('a pass without the scope on a sensitive route, no step-up: 403 insufficient_scope, never stepup_required', async () => {
          const r = await send(await agentWithPass(m, { scopes: ['list', 'orders:read'] }), 'POST', '/api/orders/42/pay');
          assert.deepEqual([r.status, r.body['error'], r.body['action']], [403, 'insufficient_scope', undefined]);
        });

        it('the lookup runs first: an unknown order is a 404 and the step-up is not used up', async () => {
          const a = await agentWithPass(m);
          const stepup = await stepupFor(m, a, payAction('43'));
          const r = await send(a, 'POST', '/api/orders/43/pay', stepup);
          assert.equal(r.status, 404);
          const res = await m.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: { stepup_token: stepup, site: SITE, action: payAction('43') } });
          assert.equal(res.json().valid, true);
        });

        it('with the step-up: 200, stepup true; the same step-up again: 401 stepup_used_or_expired', async () => {
          const a = await agentWithPass(m);
          const stepup = await stepupFor(m, a, payAction('42'));
          assert.deepEqual(await send(a, 'POST', '/api/orders/42/pay', stepup), { status: 200, body: { agent: a.agent.id, stepup: true } });
          const again = await send(a, 'POST', '/api/orders/42/pay', stepup);
          assert.deepEqual([again.status, again.body['error']], [401, 'stepup_used_or_expired']);
        });
      });
    }
  }
});
