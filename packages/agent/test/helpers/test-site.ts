import { createServer, type IncomingMessage, type Server } from 'node:http';
import { freePort } from '../../../server/test/helpers/server-process.ts';

export type SeenRequest = { method: string; path: string; authorization: string | undefined; dpop: string | undefined; stepup: string | undefined; status: number };

/**
 * A tiny site for the tests, verifying in cloud mode with the service's POST /api/v1/verify, as the
 * site-side contract says:
 *   GET  /items             needs scope `list` (also as GET /listings, the route of docs/agents/sdk.md)
 *   POST /orders/:id/pay    needs a step-up for "pay order <id>" and names that action in its 403
 *   POST /orders/:id/cancel needs a step-up for "cancel order <id>" but does not name it
 *   GET  /flaky             answers 401 token_expired to its first call, then behaves like /items
 * It records what it saw so tests can check the headers each request carried. It listens on
 * 127.0.0.1; `siteId` and `publicUrl` (what it verifies requests against) default to that address,
 * or name the site a guide uses (`shop.example` at `https://shop.example`) for a test that sends
 * that guide's requests here.
 */
export class TestSite {
  readonly seen: SeenRequest[] = [];
  /** Where it listens. */
  readonly url: string;
  readonly siteId: string;
  /** The origin requests are verified against (the `htu` of their DPoP proofs). */
  readonly publicUrl: string;
  private flakyDone = false;

  private constructor(private readonly server: Server, port: number, private readonly serviceUrl: string, as: { siteId?: string; publicUrl?: string }) {
    this.url = `http://127.0.0.1:${port}`;
    this.siteId = as.siteId ?? `127.0.0.1:${port}`;
    this.publicUrl = as.publicUrl ?? this.url;
  }

  static async start(serviceUrl: string, as: { siteId?: string; publicUrl?: string } = {}): Promise<TestSite> {
    const port = await freePort();
    let site: TestSite | undefined;
    const server = createServer((req, res) => {
      site!.handle(req).then(({ status, body }) => {
        site!.seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, dpop: header(req, 'dpop'), stepup: header(req, 'x-service-stepup'), status });
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }, (e: unknown) => {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'verification_unavailable', detail: String(e) }));
      });
    });
    site = new TestSite(server, port, serviceUrl, as);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return site;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async verify(req: IncomingMessage, extra: Record<string, string> = {}): Promise<Record<string, any>> {
    const res = await fetch(`${this.serviceUrl}/api/v1/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: bearer(req), dpop: header(req, 'dpop') ?? '', method: req.method, url: `${this.publicUrl}${req.url}`, site: this.siteId, ...extra }),
    });
    if (res.status !== 200) throw new Error(`verify answered ${res.status}`);
    return (await res.json()) as Record<string, any>;
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    for await (const _ of req); // drain the body
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'GET' && path === '/flaky' && !this.flakyDone) {
      this.flakyDone = true;
      return { status: 401, body: { error: 'token_expired' } };
    }
    if (req.method === 'GET' && (path === '/items' || path === '/listings' || path === '/flaky')) {
      const v = await this.verify(req);
      if (!v.valid) return { status: 401, body: { error: v.error } };
      if (!v.scopes.includes('list')) return { status: 403, body: { error: 'insufficient_scope' } };
      return { status: 200, body: { items: ['a', 'b'], agent: v.agent_name } };
    }
    const order = /^\/orders\/(\d+)\/(pay|cancel)$/.exec(path);
    if (req.method === 'POST' && order) {
      const [, id, verb] = order;
      const action = `${verb} order ${id}`;
      const stepupToken = header(req, 'x-service-stepup');
      const v = await this.verify(req, stepupToken ? { stepup_token: stepupToken, action } : {});
      if (!v.valid) return { status: 401, body: { error: v.error } };
      if (!v.stepup) return { status: 403, body: { error: 'stepup_required', ...(verb === 'pay' ? { action } : {}) } };
      return { status: 200, body: { order: id, done: verb } };
    }
    return { status: 404, body: { error: 'not found' } };
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function bearer(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? '';
  return auth.startsWith('Bearer ') ? auth.slice(7) : '';
}
