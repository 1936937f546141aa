/**
 * The baseline of the take-over relay benchmark, as its own process: a bare relay on the `ws` package.
 * Two sockets on `/relay/<id>/agent` and `/relay/<id>/owner` are paired by the id, and each message is
 * forwarded to the other end as it came (a Buffer, sent as text: no decoding, no check). What it
 * shares with the Mandate relay (packages/server/src/relay/relay-core.ts), so that the two differ
 * only in what Mandate adds (Fastify's upgrade and authorization, the check of every message on its
 * received bytes, the application's larger heap; Mandate too forwards the bytes it received, with no
 * decoding or encoding): `{"t":"live"}` to the agent when the owner connects, the same
 * `maxPayload`, and the same drop rule (an agent's message is dropped while more than 1 MiB is still
 * unsent to the owner), without which a saturated baseline would queue without bound instead.
 * The agent leaving closes the owner. Env: PORT.
 */
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { MAX_MESSAGE_BYTES, MAX_UNSENT_TO_OWNER } from '../../packages/server/src/domain/takeovers/relay-messages.ts';

const PATH = /^\/relay\/([A-Za-z0-9_-]{1,64})\/(agent|owner)$/;

interface Pair {
  agent?: WebSocket;
  owner?: WebSocket;
}
const pairs = new Map<string, Pair>();

const http = createServer((req, res) => {
  res.statusCode = req.url === '/healthz' ? 200 : 404;
  res.end();
});
const wss = new WebSocketServer({ server: http, maxPayload: MAX_MESSAGE_BYTES });

wss.on('connection', (ws, req) => {
  const m = PATH.exec(req.url ?? '');
  const id = m?.[1];
  const role = m?.[2] as 'agent' | 'owner' | undefined;
  if (id === undefined || role === undefined) return ws.close(1008, 'path is /relay/<id>/agent or /relay/<id>/owner');
  let pair = pairs.get(id);
  if (!pair) pairs.set(id, (pair = {}));
  const p = pair;
  p[role]?.close(4000, 'replaced by a newer connection');
  p[role] = ws;
  ws.on('error', () => {});
  ws.on('message', (data, isBinary) => {
    const other = role === 'agent' ? p.owner : p.agent;
    if (!other || other.readyState !== 1) return;
    if (role === 'agent' && other.bufferedAmount > MAX_UNSENT_TO_OWNER) return;
    other.send(data, { binary: isBinary });
  });
  ws.on('close', () => {
    if (p[role] !== ws) return;
    p[role] = undefined;
    if (role === 'agent') {
      pairs.delete(id);
      p.owner?.close(1000, 'agent_left');
    } else if (!p.agent) {
      pairs.delete(id);
    }
  });
  if (role === 'owner' && p.agent?.readyState === 1) p.agent.send('{"t":"live"}');
});

// Upgraded sockets are not the HTTP server's to wait for: stopping is exiting.
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
http.listen(Number(process.env.PORT), '127.0.0.1');
