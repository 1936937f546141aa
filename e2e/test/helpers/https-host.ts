import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * An https host on 127.0.0.1 with a certificate made for the run (openssl, P-256, one day), for what
 * must be https in the real world: an MCP client's Client ID Metadata Document (the MCP SDK refuses an
 * http `clientMetadataUrl`). The service trusts it through `NODE_EXTRA_CA_CERTS=<caFile>`, as a
 * deployment trusts a private CA; it reaches it because tests run it with OUTBOUND_ALLOW_LOOPBACK.
 */
export type HttpsHost = {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** The certificate (self-signed: it is its own CA), PEM. */
  caFile: string;
  /** Every request it got: method and path. */
  requests: { method: string; path: string }[];
  close(): Promise<void>;
};

export async function startHttpsHost(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<HttpsHost> {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-https-'));
  const key = join(dir, 'key.pem');
  const caFile = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', caFile,
  ], { stdio: 'pipe' });
  const requests: HttpsHost['requests'] = [];
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(caFile) }, (req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    caFile,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
