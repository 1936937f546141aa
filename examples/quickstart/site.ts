// A tiny site that lets Mandate agents in, verifying every request in cloud mode.
//   GET  /listings          needs scope `list`
//   POST /orders/:id/pay    needs scope `pay` and the owner's step-up for "pay order <id>"
//   MANDATE_URL=http://localhost:8080 SITE_ID=localhost:3000 PUBLIC_BASE_URL=http://localhost:3000 \
//     node --import tsx examples/quickstart/site.ts
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const MANDATE_URL = process.env.MANDATE_URL ?? 'http://localhost:8080';
const PORT = Number(process.env.PORT ?? 3000);
const HOST = process.env.HOST ?? '127.0.0.1';
const SITE_ID = process.env.SITE_ID ?? `localhost:${PORT}`; // the site agents ask access for
const PUBLIC_BASE_URL = process.env.PUBLIC_BASE_URL ?? ''; // how agents reach us, e.g. https://shop.example
const TRUST_FORWARDED = process.env.TRUST_FORWARDED === 'true'; // only behind your own proxy

const listings = [{ id: 'l1', title: 'Bike, 3 gears' }, { id: 'l2', title: 'Lamp' }];
const orders = new Map([['42', { amount: '19.90 EUR', paid: false }]]);

// --- The URL the agent's DPoP proof signs ---------------------------------------------------------
function publicUrl(req: IncomingMessage): string {
  if (PUBLIC_BASE_URL) return PUBLIC_BASE_URL.replace(/\/$/, '') + req.url;
  const first = (h: string | string[] | undefined) => String(h ?? '').split(',')[0]?.trim() || undefined;
  const proto = (TRUST_FORWARDED && first(req.headers['x-forwarded-proto'])) || 'http';
  const host = (TRUST_FORWARDED && first(req.headers['x-forwarded-host'])) || req.headers.host;
  return `${proto}://${host}${req.url}`;
}

// --- Cloud-mode verification: one call to Mandate per request ------------------------------------
type Verdict =
  | { valid: true; agent_id: string; agent_name: string; user_id: string; scopes: string[]; user_info: Record<string, string>; stepup: boolean }
  | { valid: false; error: string; error_description: string };

async function verify(req: IncomingMessage, action?: string): Promise<Verdict> {
  const [scheme, accessToken] = (req.headers.authorization ?? '').split(' ');
  const dpop = req.headers.dpop;
  if (scheme?.toLowerCase() !== 'bearer' || !accessToken || typeof dpop !== 'string') {
    return { valid: false, error: 'invalid_request', error_description: 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>' };
  }
  const stepupToken = req.headers['x-service-stepup'];
  const res = await fetch(`${MANDATE_URL}/api/v1/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      access_token: accessToken, dpop, method: req.method, url: publicUrl(req), site: SITE_ID,
      // Only on a sensitive route: a step-up sent to verify is used up when it is accepted.
      ...(action && typeof stepupToken === 'string' ? { stepup_token: stepupToken, action } : {}),
    }),
    signal: AbortSignal.timeout(5000),
  });
  // Anything but 200 (503 while Mandate's database is down, a proxy error...) is no verdict.
  if (res.status !== 200) throw new Error(`verify answered ${res.status}`);
  return (await res.json()) as Verdict;
}

// --- The routes, each following the site rules ---------------------------------------------------
function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;

  if (req.method === 'GET' && path === '/listings') {
    const v = await verify(req);
    if (!v.valid) return send(res, 401, { error: v.error, error_description: v.error_description });
    if (!v.scopes.includes('list')) return send(res, 403, { error: 'insufficient_scope', error_description: 'this route needs the scope list' });
    return send(res, 200, { listings, for: v.agent_name });
  }

  const pay = req.method === 'POST' ? /^\/orders\/([^/]+)\/pay$/.exec(path) : null;
  if (pay) {
    const id = pay[1] ?? '';
    const order = orders.get(id);
    // Cheap checks first: a step-up is used up the moment verification accepts it.
    if (!order) return send(res, 404, { error: 'no such order' });
    if (order.paid) return send(res, 409, { error: 'already paid' });
    const v = await verify(req, `pay order ${id}`);
    if (!v.valid) return send(res, 401, { error: v.error, error_description: v.error_description });
    if (!v.scopes.includes('pay')) return send(res, 403, { error: 'insufficient_scope', error_description: 'this route needs the scope pay' });
    if (!v.stepup) return send(res, 403, { error: 'stepup_required' });
    order.paid = true;
    return send(res, 200, { order: id, paid: order.amount });
  }

  send(res, 404, { error: 'not found' });
}

const server = createServer((req, res) => {
  handle(req, res).catch((err) => {
    // Mandate unreachable or failing: refuse, never let the request through unverified.
    console.error(`refused ${req.method} ${req.url}: ${err instanceof Error ? err.message : err}`);
    if (!res.headersSent) send(res, 503, { error: 'verification_unavailable', error_description: 'passes cannot be verified right now; try again shortly' });
  });
});
server.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EADDRINUSE') throw err;
  console.error(`site: port ${PORT} is already in use (another example running?); start it with PORT=<a free port>`);
  process.exit(1);
});
server.listen(PORT, HOST, () => console.log(`site ${SITE_ID} listening on http://${HOST}:${PORT}`));
