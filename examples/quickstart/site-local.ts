// The quickstart site's listing route in local mode: passes are checked here, against Mandate's
// published keys and its signed revocation list, without a call to Mandate per request.
//   GET /listings    needs scope `list`
//   MANDATE_URL=http://localhost:8080 node --import tsx examples/quickstart/site-local.ts
// It starts whether Mandate is reachable or not: requests are refused (503) until the revocation
// list is fetched, and fetching is retried every few seconds.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  type KeyResolver, ProtocolError, type RevocationClaims, keyResolverFromJwks, revocationVerdict, verifyPassAndProof, verifyRevocationSnapshot,
} from '@mandate/protocol';

const MANDATE_URL = process.env.MANDATE_URL ?? 'http://localhost:8080';
const ISSUER = process.env.MANDATE_ISSUER ?? MANDATE_URL; // Mandate's BASE_URL exactly: the passes' `iss`
const PORT = Number(process.env.PORT ?? 3000);
const HOST = process.env.HOST ?? '127.0.0.1';
const SITE_ID = process.env.SITE_ID ?? `localhost:${PORT}`;
const PUBLIC_BASE_URL = process.env.PUBLIC_BASE_URL ?? `http://localhost:${PORT}`; // how agents reach us
const REV_TTL = 60; // s: fetch the revocation list this often
const MAX_STALE = 300; // s: refuse every request once the list held was signed longer ago than this

const listings = [{ id: 'l1', title: 'Bike, 3 gears' }, { id: 'l2', title: 'Lamp' }];
const seen = new Map<string, number>(); // DPoP jti -> expiry; use a store shared by all your nodes
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

// --- Mandate's keys: fetched when first needed, and again for a kid we do not hold ----------------
let resolver: KeyResolver | undefined;
let keysFetchedAt = 0;

async function fetchKeys(): Promise<void> {
  keysFetchedAt = Date.now();
  const res = await fetch(`${MANDATE_URL}/api/v1/jwks`, { signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`GET /api/v1/jwks answered ${res.status}`);
  resolver = keyResolverFromJwks(await res.json());
}

const keys: KeyResolver = async (kid) => {
  const key = await resolver?.(kid);
  // Keys rotate: an unknown kid fetches them again, but not more than once every 10 s.
  if (key || (resolver && Date.now() - keysFetchedAt < 10_000)) return key;
  await fetchKeys();
  return resolver?.(kid);
};

// --- The signed revocation list: fetched at start, then every REV_TTL s ---------------------------
let snapshot: RevocationClaims | undefined;
let etag = '';

async function fetchRevocations(): Promise<void> {
  // Once the list held is half way to MAX_STALE, ask for a freshly signed one instead of a 304.
  const fresh = snapshot && Date.now() / 1000 - snapshot.iat < MAX_STALE / 2;
  const res = await fetch(`${MANDATE_URL}/api/v1/revocation`, {
    headers: fresh && etag ? { 'if-none-match': etag } : {},
    signal: AbortSignal.timeout(5000),
  });
  if (res.status === 304) return; // unchanged
  if (res.status !== 200) throw new Error(`GET /api/v1/revocation answered ${res.status}`);
  const body = (await res.json()) as { signature?: unknown };
  // Only the signed content counts, and revocations never go backwards.
  const claims = await verifyRevocationSnapshot(body.signature, { keys, issuer: ISSUER, now: Math.floor(Date.now() / 1000) });
  if (snapshot && claims.rev_seq < snapshot.rev_seq) return;
  snapshot = claims;
  etag = res.headers.get('etag') ?? '';
}

// Now, then every REV_TTL s; after a failure sooner (1, 2, 4, 8, then every 10 s). Every failure is
// caught and logged here: an unreachable Mandate never crashes the site.
function poll(failures = 0): void {
  fetchRevocations().then(
    () => {
      const now = Date.now() / 1000;
      for (const [jti, expiresAt] of seen) if (expiresAt < now) seen.delete(jti); // forget spent proofs
      setTimeout(() => poll(), REV_TTL * 1000);
    },
    (err: unknown) => {
      const retryIn = Math.min(2 ** failures, 10);
      console.warn(`revocation list not fetched (${message(err)}); retrying in ${retryIn} s`);
      setTimeout(() => poll(failures + 1), retryIn * 1000);
    },
  );
}
poll();

// --- Verifying one request: pass, proof, revocation, then the proof's jti used up -----------------
type Verdict = { valid: true; agent: string; scopes: string[] } | { valid: false; error: string; error_description: string };

async function verifyLocally(req: IncomingMessage): Promise<Verdict> {
  // No pass at all needs no verdict: say what to send.
  if (!req.headers.authorization || !req.headers.dpop) {
    return { valid: false, error: 'invalid_request', error_description: 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>' };
  }
  const now = Math.floor(Date.now() / 1000);
  const current = snapshot;
  // Without a recent revocation list there is no verdict: refuse (503), never let the request through.
  if (!current) throw new Error('no revocation list from Mandate yet');
  if (now - current.iat > MAX_STALE) throw new Error(`the revocation list held is older than ${MAX_STALE} s`);
  try {
    const { claims } = await verifyPassAndProof({
      accessToken: req.headers.authorization?.replace(/^Bearer /i, ''), dpop: req.headers.dpop,
      method: req.method ?? '', url: PUBLIC_BASE_URL.replace(/\/$/, '') + req.url, site: SITE_ID, now, keys, issuer: ISSUER,
      isRevoked: async (pass) => revocationVerdict(pass, current),
      consumeJti: async (jti, expiresAtSec) => {
        if (seen.has(jti)) return false;
        seen.set(jti, expiresAtSec);
        return true;
      },
    });
    return { valid: true, agent: claims.sub, scopes: claims.scope };
  } catch (e) {
    if (e instanceof ProtocolError) return { valid: false, error: e.code, error_description: e.message };
    throw e; // not a verdict (Mandate unreachable while fetching keys): refuse
  }
}

// --- The route, following the site rules, and the server ------------------------------------------
function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (req.method === 'GET' && path === '/listings') {
    const v = await verifyLocally(req);
    if (!v.valid) return send(res, 401, { error: v.error, error_description: v.error_description });
    if (!v.scopes.includes('list')) return send(res, 403, { error: 'insufficient_scope', error_description: 'this route needs the scope list' });
    return send(res, 200, { listings, for: v.agent });
  }
  send(res, 404, { error: 'not found' });
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    console.error(`refused ${req.method} ${req.url}: ${message(err)}`);
    if (!res.headersSent) send(res, 503, { error: 'verification_unavailable', error_description: 'passes cannot be verified right now; try again shortly' });
  });
});
server.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EADDRINUSE') throw err;
  console.error(`site: port ${PORT} is already in use (another example running?); start it with PORT=<a free port>`);
  process.exit(1);
});
server.listen(PORT, HOST, () => console.log(`site ${SITE_ID} (local mode) listening on http://${HOST}:${PORT}`));
