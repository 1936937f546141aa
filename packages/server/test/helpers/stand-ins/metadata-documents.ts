import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stand-in answers at one path. */
export interface Served {
  status?: number;
  /** A JSON value (serialised) or raw text. */
  body: unknown;
  headers?: Record<string, string>;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
}

/**
 * A local server that plays an MCP client's web site publishing its Client ID Metadata Documents
 * (decisions §28). It counts the requests per path and checks each is a plain GET asking for JSON,
 * as the service's fetch must be.
 */
export class MetadataDocumentSite {
  readonly fetches = new Map<string, number>();
  readonly problems: string[] = [];
  private readonly routes = new Map<string, Served>();
  private server: Server | undefined;
  origin = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '';
      this.fetches.set(path, (this.fetches.get(path) ?? 0) + 1);
      if (req.method !== 'GET') this.problems.push(`${req.method} ${path}`);
      if (req.headers.accept !== 'application/json') this.problems.push(`accept ${req.headers.accept ?? ''} at ${path}`);
      if (req.headers.cookie !== undefined || req.headers.authorization !== undefined) this.problems.push(`credentials sent to ${path}`);
      const served = this.routes.get(path);
      const answer = (): void => {
        if (!served) {
          res.writeHead(404).end('not found');
          return;
        }
        const text = typeof served.body === 'string' ? served.body : JSON.stringify(served.body);
        res.writeHead(served.status ?? 200, { 'content-type': 'application/json', ...served.headers }).end(text);
      };
      if (served?.delayMs) setTimeout(answer, served.delayMs);
      else answer();
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Serves `served` at `path`; answers the document's URL (its client_id). */
  serve(path: string, served: Served): string {
    this.routes.set(path, served);
    return `${this.origin}${path}`;
  }

  count(path: string): number {
    return this.fetches.get(path) ?? 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
