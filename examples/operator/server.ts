// The example operator's web server: the verification file, the "Connect your Mandate account"
// link, and the callback that turns the person's one-time code into a connection.
//   OPERATOR_ID=op_... OPERATOR_SECRET=... VERIFICATION_LINE='mandate-operator=op_...:...' \
//     node --import tsx examples/operator/server.ts
// Other settings: see config.ts. Register <PUBLIC_URL>/callback as the redirect URI.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readConfig } from './config.ts';
import { ConnectFlow } from './connect-flow.ts';
import { OperatorApi } from './operator-api.ts';
import { OperatorStore } from './store.ts';

const cfg = readConfig();
const api = new OperatorApi(cfg);
const store = new OperatorStore(cfg.dataDir);
const flow = new ConnectFlow(cfg);
const STATE_COOKIE = 'mandate_connect';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><meta charset="utf-8"><title>${escape(title)}</title><h1>${escape(title)}</h1>${body}`);
}

// Mandate fetches this file to check that this operator controls its domain.
function verificationFile(res: ServerResponse): void {
  if (!cfg.verificationLine) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/plain' }).end(`${cfg.verificationLine}\n`);
}

function startConnecting(res: ServerResponse): void {
  const { location, state } = flow.start();
  // Lax: the cookie comes back when Mandate sends the browser here with a top-level GET.
  const secure = cfg.publicUrl.startsWith('https:') ? '; Secure' : '';
  res.writeHead(302, { location, 'set-cookie': `${STATE_COOKIE}=${state}; Path=/; HttpOnly; SameSite=Lax; Max-Age=600${secure}` }).end();
}

async function callback(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
  const cookie = new RegExp(`(?:^|;\\s*)${STATE_COOKIE}=([^;]+)`).exec(req.headers.cookie ?? '')?.[1];
  const result = flow.finish(query, cookie);
  if (!result.ok) return page(res, result.status, 'Not connected', `<p>${escape(result.reason)}</p><p><a href="/">Back</a></p>`);
  // At once: the code works once and for 60 seconds.
  const connection = await api.exchangeCode(result.code, result.verifier, cfg.redirectUri);
  store.saveConnection(connection);
  console.log(`connected: ${connection.connection_id} (up to ${connection.max_agents} agents)`);
  page(res, 200, 'Connected', `<p>Your Mandate account is connected: <code id="connection">${escape(connection.connection_id)}</code>.</p>`
    + `<p>We may add up to <span id="max-agents">${connection.max_agents}</span> agents for you; you see each one in your Mandate app.</p>`);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', cfg.publicUrl);
  const route = `${req.method} ${url.pathname}`;
  const answer = async (): Promise<void> => {
    if (route === 'GET /.well-known/service-site.txt') return verificationFile(res);
    if (route === 'GET /') return page(res, 200, 'Example operator', '<p><a id="connect" href="/connect/start">Connect your Mandate account</a></p>');
    if (route === 'GET /connect/start') return startConnecting(res);
    if (route === 'GET /callback') return callback(req, res, url.searchParams);
    res.writeHead(404).end();
  };
  answer().catch((e: unknown) => {
    console.error(`${route}: ${e instanceof Error ? e.message : String(e)}`);
    if (!res.headersSent) page(res, 502, 'Not connected', '<p>Mandate did not accept the connection: please start again.</p>');
  });
});
server.listen(cfg.port, cfg.host, () => {
  console.log(`example operator listening on http://${cfg.host}:${cfg.port} (public URL ${cfg.publicUrl}, operator ${cfg.operatorId}, Mandate at ${cfg.mandateUrl})`);
});

function shutdown(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
