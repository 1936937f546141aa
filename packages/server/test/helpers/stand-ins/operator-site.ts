/**
 * An operator's web site on 127.0.0.1 for tests: serves `/.well-known/service-site.txt` as the test
 * says (a body, a status, a redirect, a body too large), records every request, and answers anything
 * but a GET of that path with 404 or 405 (the service must fetch exactly the verification file).
 * Test code only: never imported by src/.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const VERIFICATION_PATH = '/.well-known/service-site.txt';

export interface OperatorSite {
  origin: string;
  requests: { method: string; path: string; host: string }[];
  /** What the file answers next: a status and a body (text), or a redirect. */
  serve(answer: { status?: number; body?: string | Buffer; location?: string }): void;
  close(): Promise<void>;
}

export async function startOperatorSite(): Promise<OperatorSite> {
  let answer: { status?: number; body?: string | Buffer; location?: string } = { status: 404, body: '' };
  const requests: OperatorSite['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', host: req.headers.host ?? '' });
    if (req.method !== 'GET') return void res.writeHead(405).end();
    if (req.url !== VERIFICATION_PATH) return void res.writeHead(404).end();
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (answer.location !== undefined) headers.location = answer.location;
    res.writeHead(answer.status ?? 200, headers).end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    serve(a) {
      answer = a;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
