// A notes MCP server protected by Mandate, on node:http.
//   npm run demo:mcp                 (cloud mode, Mandate at http://localhost:8080, port 3002)
//   MODE=local npm run demo:mcp      (checks passes itself with Mandate's keys and revocation list)
// Environment: MANDATE_URL, MODE, PORT, HOST, PUBLIC_URL, APPROVAL_WAIT_SEC (config.ts).
import { createServer } from 'node:http';
import { protectNotes } from './auth.ts';
import { listeningLine, loadConfig } from './config.ts';
import { Notes } from './notes.ts';
import { serveMcp } from './tools.ts';
import { startAndServe } from './lifecycle.ts';

const config = loadConfig();
const mandate = protectNotes(config);
const notes = new Notes();

const server = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(mandate.status()));
  if (path !== '/mcp' && !mandate.metadataPaths.includes(path)) return void res.writeHead(404).end();
  void (async () => {
    // Answers the metadata and every refusal (401 challenge, 403 insufficient_scope) itself.
    const verified = await mandate.handle(req, res);
    if (verified === undefined) return;
    await serveMcp(mandate, notes, verified, res, verified.body);
  })().catch((e: unknown) => {
    console.error(e);
    if (!res.headersSent) res.writeHead(500).end();
  });
});

await startAndServe(mandate, server, config, listeningLine(config, 'node:http'));
