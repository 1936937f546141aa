// A local-mode site as its own process, for revocation-stream-real.test.ts: node:http, `requireAgent`
// on GET /orders, and GET /status answering `verifier.status()` (how revocations reach it now).
// The revocation mode is the default (the event stream) unless REVOCATION=poll (the test's control).
// Environment: MANDATE_URL, SITE_ID, PUBLIC_BASE_URL, PORT, REV_TTL_SEC, REVOCATION. Every SDK error is printed (the test shows them on failure).
import { createServer } from 'node:http';
import { createVerifier, requireAgent } from '../../src/index.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};

const verifier = createVerifier({
  mode: 'local',
  serviceUrl: env('MANDATE_URL'),
  site: env('SITE_ID'),
  publicBaseUrl: env('PUBLIC_BASE_URL'),
  revTtlSec: Number(env('REV_TTL_SEC')),
  ...(process.env.REVOCATION === 'poll' ? { revocation: 'poll' as const } : {}),
  onError: (e) => console.warn(`${new Date().toISOString()} mandate: ${e.message}`),
});
await verifier.start();

const orders = requireAgent(verifier, {}, (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ agent: req.mandate.agentId, orders: [] }));
});
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/status') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(verifier.status()));
    return;
  }
  if (req.method === 'GET' && req.url === '/orders') {
    orders(req, res).catch((e: unknown) => {
      console.error(e);
      if (!res.headersSent) res.writeHead(500).end();
    });
    return;
  }
  res.writeHead(404).end();
});
server.listen(Number(env('PORT')), '127.0.0.1', () => console.log('stream site listening'));

process.once('SIGTERM', () => {
  verifier.close();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
