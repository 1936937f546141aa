import type { Mode } from '@mandate/site';

/**
 * The example's settings, from the environment:
 *   MANDATE_URL        where Mandate is (default http://localhost:8080)
 *   MODE               cloud (Mandate checks each pass) or local (checked here with Mandate's keys)
 *   PORT, HOST         where it listens (default 3002, 127.0.0.1)
 *   PUBLIC_URL         how MCP clients reach it, an origin (default http://localhost:<PORT>); the resource is PUBLIC_URL/mcp
 *   APPROVAL_WAIT_SEC  how long a call needing approval waits for the owner (1 to 25, default 25)
 */
export type Config = { port: number; host: string; service: string; mode: Mode; publicUrl: string; resource: string; approvalWaitSec?: number };

export function configFromEnv(env: NodeJS.ProcessEnv): Config {
  const port = Number(env['PORT'] ?? 3002);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${env['PORT']}`);
  const service = env['MANDATE_URL'] ?? 'http://localhost:8080';
  if (!URL.canParse(service)) throw new Error(`MANDATE_URL must be Mandate's URL, such as https://mandate.example, not ${service}`);
  const mode = env['MODE'] ?? 'cloud';
  if (mode !== 'cloud' && mode !== 'local') throw new Error(`MODE must be cloud or local, not ${mode}`);
  const publicUrl = env['PUBLIC_URL'] ?? `http://localhost:${port}`;
  if (!URL.canParse(publicUrl) || new URL(publicUrl).origin !== publicUrl) throw new Error(`PUBLIC_URL must be an origin such as https://notes.example, not ${publicUrl}`);
  const wait = env['APPROVAL_WAIT_SEC'];
  if (wait !== undefined && !/^([1-9]|1\d|2[0-5])$/.test(wait)) throw new Error(`APPROVAL_WAIT_SEC must be a whole number of seconds from 1 to 25, not ${wait}`);
  return {
    port,
    host: env['HOST'] ?? '127.0.0.1',
    service,
    mode,
    publicUrl,
    resource: `${publicUrl}/mcp`,
    ...(wait === undefined ? {} : { approvalWaitSec: Number(wait) }),
  };
}

/** The settings of this process; a bad one is said in one line, and the process exits with status 2. */
export function loadConfig(): Config {
  try {
    return configFromEnv(process.env);
  } catch (e) {
    console.error(`notes MCP server: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  }
}

/** The line printed once the server listens (the tests wait for its start). */
export const listeningLine = (c: Config, kind: string): string =>
  `notes MCP server (${kind}) listening on http://${c.host}:${c.port}: resource ${c.resource}, ${c.mode} mode, Mandate at ${c.service}`;
