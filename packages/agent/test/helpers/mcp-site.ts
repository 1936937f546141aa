import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small site for the MCP tests, with what a real shop does not do: it echoes the request's
 * headers (so a test sees that no credential comes back to the model), never answers `/hang`,
 * streams 200 kB from `/big`, and asks for a step-up on `/stepup` without naming the action,
 * keeping the step-up tokens it receives (so the secrets scan knows the ones actually issued).
 */
export class McpTestSite {
  readonly stepupTokens: string[] = [];
  readonly hanging = new Set<() => void>();
  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<McpTestSite> {
    let site: McpTestSite | undefined;
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      req.resume();
      if (path === '/echo') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers }));
      if (path === '/hang') {
        res.writeHead(200, { 'content-type': 'text/plain' }).write('a start, and then nothing');
        site?.hanging.add(() => res.destroy());
        return;
      }
      if (path === '/big') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('é'.repeat(100 * 1024)); // 200 kB of 2-byte characters
      if (path === '/stepup') {
        const token = req.headers['x-service-stepup'];
        if (typeof token !== 'string') return void res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'stepup_required' }));
        site?.stepupTokens.push(token);
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ done: true }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    site = new McpTestSite(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return site;
  }

  async stop(): Promise<void> {
    for (const end of this.hanging) end();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
