import type { Server } from 'node:http';
import type { McpAuth } from '@mandate/site';
import type { Config } from './config.ts';

/**
 * Starts Mandate's checks (local mode: keys and revocation list first; if Mandate is down, requests
 * get 503 until it is back), listens, prints `line`, and closes on SIGTERM or SIGINT with status 0.
 */
export async function startAndServe(mandate: McpAuth, server: Server, config: Config, line: string): Promise<void> {
  await mandate.start().catch((e: unknown) => console.warn(`mandate: not ready yet (${e instanceof Error ? e.message : String(e)}); retrying in the background`));
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EADDRINUSE') throw err;
    console.error(`notes MCP server: port ${config.port} is already in use; start it with PORT=<a free port>`);
    process.exit(1);
  });
  server.listen(config.port, config.host, () => console.log(line));

  const shutdown = () => {
    mandate.close();
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
