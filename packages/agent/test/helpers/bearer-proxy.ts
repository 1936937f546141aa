import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local forwarding proxy that plays an MCP host configured with the server's token: every request
 * it receives goes on to `target` with `Authorization: Bearer <token>` added, and with everything
 * else (method, path, body, and notably Host and Origin) unchanged; the answer streams back as it
 * comes (server-sent events included). Clients that cannot be given a header, such as the MCP
 * conformance suite, test a token-guarded server through it.
 */
export interface BearerProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `127.0.0.1:<port>`: the Host header its clients send, which the server behind must allow. */
  readonly host: string;
  /** How many requests it forwarded. */
  forwarded(): number;
  close(): Promise<void>;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/** Starts the proxy on a free port of 127.0.0.1, forwarding to the origin of `target` (which may start later). */
export async function startBearerProxy(target: string, token: string): Promise<BearerProxy> {
  const to = new URL(target);
  let count = 0;
  const server: Server = createServer((req, res) => {
    count += 1;
    const outgoing = request(
      { hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...endToEnd(req.headers), authorization: `Bearer ${token}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    outgoing.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`bearer proxy: ${e.message}`);
    });
    // The client hung up before the answer ended (it closes a server-sent event stream so): so does the request behind.
    res.on('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    forwarded: () => count,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
