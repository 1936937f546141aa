// The Mandate demo shop: a small shop whose routes agents use with their owner's approval.
//   npm run demo:shop                      (cloud mode, Mandate at http://localhost:8080, port 3001)
//   MANDATE_MODE=local npm run demo:shop   (verifies passes itself; Mandate only for step-ups)
// Environment: MANDATE_URL, MANDATE_MODE (cloud | local), SITE_ID, PUBLIC_BASE_URL, PORT, HOST,
// MANDATE_ISSUER (local mode: Mandate's BASE_URL when it differs from MANDATE_URL), REV_TTL_SEC and
// MAX_STALE_SEC (local mode).
import { createServer } from 'node:http';
import { createVerifier } from '@mandate/site';
import { createShopApp } from './app.ts';

// 3001, not 3000: the quickstart's example site (docs/agents/quickstart.md) runs beside it on 3000.
const PORT = Number(process.env.PORT ?? 3001);
const HOST = process.env.HOST ?? '127.0.0.1';
const MANDATE_URL = process.env.MANDATE_URL ?? 'http://localhost:8080';
const MODE = process.env.MANDATE_MODE ?? 'cloud';
const SITE_ID = process.env.SITE_ID ?? `localhost:${PORT}`;
const PUBLIC_BASE_URL = process.env.PUBLIC_BASE_URL ?? `http://localhost:${PORT}`;

if (MODE !== 'cloud' && MODE !== 'local') {
  console.error(`MANDATE_MODE must be cloud or local, not ${MODE}`);
  process.exit(2);
}

const verifier = createVerifier({
  mode: MODE,
  serviceUrl: MANDATE_URL,
  site: SITE_ID,
  publicBaseUrl: PUBLIC_BASE_URL,
  trustForwardedHeaders: process.env.TRUST_FORWARDED === 'true',
  ...(process.env.MANDATE_ISSUER ? { issuer: process.env.MANDATE_ISSUER } : {}),
  ...(process.env.REV_TTL_SEC ? { revTtlSec: Number(process.env.REV_TTL_SEC) } : {}),
  ...(process.env.MAX_STALE_SEC ? { maxStaleSec: Number(process.env.MAX_STALE_SEC) } : {}),
  onError: (e) => console.warn(`mandate: ${e.message}`),
});

if (MODE === 'local') {
  // Keys and revocation list before the first request; if Mandate is down, requests get 503 until it is back.
  await verifier.start().catch((e: unknown) => console.warn(`mandate: not ready yet (${e instanceof Error ? e.message : String(e)}); retrying in the background`));
}

const server = createServer(createShopApp(verifier, PUBLIC_BASE_URL === '' ? {} : { publicBaseUrl: PUBLIC_BASE_URL }));
server.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EADDRINUSE') throw err;
  console.error(`demo shop: port ${PORT} is already in use (another example running?); start it with PORT=<a free port> npm run demo:shop`);
  process.exit(1);
});
server.listen(PORT, HOST, () => {
  console.log(`demo shop listening on http://${HOST}:${PORT} (site ${SITE_ID}, public URL ${PUBLIC_BASE_URL}, ${MODE} mode, Mandate at ${MANDATE_URL})`);
});

function shutdown(): void {
  verifier.close();
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 3000).unref();
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
