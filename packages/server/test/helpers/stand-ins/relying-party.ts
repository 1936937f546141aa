/**
 * A relying party's back-channel logout endpoint (OpenID Connect Back-Channel Logout 1.0 §2.5–2.8)
 * on 127.0.0.1 for tests. Every POST is checked the way a strict RP would: a form body with one
 * `logout_token`, an ES256 JWS typed `logout+jwt` whose signature verifies against the service's
 * JWKS (on node:crypto, independently of jose, which signed it), `iss`, `aud`, `iat`/`exp` (at most
 * 120 s apart), a `jti` never seen before, the logout event, `sid` and `sub`, and no `nonce`. A
 * failed check is answered 400 with an OAuth error body (§2.8) and kept in `rejections`.
 * Test code only: never imported by src/.
 */
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const MAX_LIFETIME_SEC = 120;
/** How far ahead of the RP's clock an `iat` may be (clocks differ a little). */
const SKEW_SEC = 5;
const MAX_BODY = 8192;

export interface Jwks {
  keys: (JsonWebKey & { kid?: string })[];
}

export interface LogoutTokenSeen {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** What the stand-in answered: 200, the status it was told to, or `hang`. */
  answered: number | 'hang';
}

/** What the endpoint does with a valid token instead of accepting it. */
export type RpBehaviour = { status: number; body?: string; retryAfter?: string } | { hang: true };

export interface RelyingPartyStandIn {
  readonly origin: string;
  /** The back-channel logout endpoint to register for the client. */
  readonly uri: string;
  /** Every token that passed the checks, in order, whatever was answered. */
  readonly received: LogoutTokenSeen[];
  /** Tokens answered 200: the logouts the RP carried out. */
  accepted(): LogoutTokenSeen[];
  readonly rejections: { status: number; reason: string }[];
  /** Requests of any kind that reached the endpoint. */
  readonly requests: number;
  behave(behaviour: RpBehaviour | undefined): void;
  close(): Promise<void>;
}

export interface RelyingPartyOptions {
  /** The expected `iss` (the service's base URL). */
  issuer: string;
  /** The expected `aud`. */
  clientId: string;
  /** The service's JWKS, asked for on every token (so a rotation is seen), e.g. `GET /api/v1/jwks`. */
  jwks: () => Promise<Jwks> | Jwks;
  /** The RP's clock in ms; the service's fixed clock in tests. */
  now?: () => number;
}

class Refused extends Error {}

const b64json = (part: string): Record<string, unknown> => {
  const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Refused('a JWS part is not a JSON object');
  return value as Record<string, unknown>;
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => (size > MAX_BODY ? reject(new Refused(`body over ${MAX_BODY} octets`)) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** §2.5: `application/x-www-form-urlencoded` with exactly one parameter, `logout_token`, once. */
function tokenOf(contentType: string | undefined, body: string): string {
  if (contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/x-www-form-urlencoded') throw new Refused(`content type is ${String(contentType)}, not a form`);
  const form = new URLSearchParams(body);
  const names = [...form.keys()];
  if (names.length !== 1 || names[0] !== 'logout_token') throw new Refused(`the form holds ${JSON.stringify(names)}, not one logout_token`);
  const token = form.get('logout_token');
  if (!token) throw new Refused('logout_token is empty');
  return token;
}

/** §2.6 validation, in the order an RP would do it. */
async function checkToken(token: string, opts: RelyingPartyOptions, seenJtis: Set<string>): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> }> {
  const parts = token.split('.');
  const [h, p, s] = parts;
  if (parts.length !== 3 || h === undefined || p === undefined || s === undefined) throw new Refused('logout_token is not a compact JWS');
  const header = b64json(h);
  if (header.alg !== 'ES256') throw new Refused(`alg is ${String(header.alg)}, not ES256`);
  if (header.typ !== 'logout+jwt') throw new Refused(`typ is ${String(header.typ)}, not logout+jwt`);
  const jwk = (await opts.jwks()).keys.find((k) => k.kid === header.kid);
  if (jwk === undefined) throw new Refused(`kid ${String(header.kid)} is not in the service's JWKS`);
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
  const signature = Buffer.from(s, 'base64url');
  if (signature.length !== 64 || !verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, signature)) throw new Refused('signature does not verify');
  const claims = b64json(p);
  if (claims.iss !== opts.issuer) throw new Refused(`iss is ${String(claims.iss)}, not ${opts.issuer}`);
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(opts.clientId)) throw new Refused(`aud is ${JSON.stringify(claims.aud)}, not ${opts.clientId}`);
  const { iat, exp } = claims;
  const nowSec = Math.floor((opts.now ?? Date.now)() / 1000);
  if (typeof iat !== 'number' || typeof exp !== 'number') throw new Refused('iat or exp missing');
  if (iat > nowSec + SKEW_SEC) throw new Refused('iat is in the future');
  if (exp <= nowSec) throw new Refused('the token has expired');
  if (exp <= iat || exp - iat > MAX_LIFETIME_SEC) throw new Refused(`lifetime ${exp - iat} s is not within (0, ${MAX_LIFETIME_SEC}]`);
  if (typeof claims.jti !== 'string' || claims.jti === '') throw new Refused('jti missing');
  if (seenJtis.has(claims.jti)) throw new Refused('jti replayed');
  const events = claims.events;
  if (typeof events !== 'object' || events === null || !(LOGOUT_EVENT in events)) throw new Refused('events lacks the back-channel logout event');
  const event = (events as Record<string, unknown>)[LOGOUT_EVENT];
  if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new Refused('the logout event is not a JSON object');
  if (typeof claims.sid !== 'string' || claims.sid === '') throw new Refused('sid missing');
  if (typeof claims.sub !== 'string' || claims.sub === '') throw new Refused('sub missing');
  if ('nonce' in claims) throw new Refused('a logout token must not carry a nonce');
  seenJtis.add(claims.jti);
  return { header, claims };
}

export async function startRelyingParty(opts: RelyingPartyOptions): Promise<RelyingPartyStandIn> {
  const received: LogoutTokenSeen[] = [];
  const rejections: { status: number; reason: string }[] = [];
  const seenJtis = new Set<string>();
  let behaviour: RpBehaviour | undefined;
  let requests = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body = '', headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'cache-control': 'no-store', ...(body ? { 'content-type': 'application/json' } : {}), ...headers }).end(body);
    };
    requests++;
    try {
      if (req.method !== 'POST' || req.url !== '/backchannel-logout') throw new Refused(`${String(req.method)} ${String(req.url)} is not the logout endpoint`);
      const { header, claims } = await checkToken(tokenOf(req.headers['content-type'], await readBody(req)), opts, seenJtis);
      const now = behaviour;
      received.push({ header, claims, answered: now === undefined ? 200 : 'hang' in now ? 'hang' : now.status });
      if (now === undefined) return answer(200);
      if ('hang' in now) return; // the socket stays open until the sender gives up or close()
      return answer(now.status, now.body ?? '', now.retryAfter !== undefined ? { 'retry-after': now.retryAfter } : {});
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      rejections.push({ status: 400, reason });
      if (!res.headersSent) answer(400, JSON.stringify({ error: 'invalid_request', error_description: reason }));
    }
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    uri: `${origin}/backchannel-logout`,
    received,
    accepted: () => received.filter((r) => r.answered === 200),
    rejections,
    get requests() {
      return requests;
    },
    behave(b) {
      behaviour = b;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections(); // the hanging ones too
      }),
  };
}
