import type { Server } from 'node:http';

/**
 * Runs a peer's HTTP server on 127.0.0.1:`port` until SIGTERM or SIGINT, then closes it and exits.
 * Connections are kept alive 60 s: the load generator reuses them.
 */
export function serveUntilStopped(server: Server, port: number): void {
  server.keepAliveTimeout = 60_000;
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  server.listen(port, '127.0.0.1');
}
