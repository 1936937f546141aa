/**
 * A web push service (RFC 8030) on 127.0.0.1 for tests and benchmarks. It plays the browser's side
 * too: `newSubscription()` makes the P-256 key pair and auth secret a browser would, so the stand-in
 * can decrypt what it is sent. Every POST is checked the way a strict push service would (VAPID per
 * RFC 8292, aes128gcm per RFC 8291/8188, decrypted here on node:crypto, independently of the
 * `web-push` library under test); a failed check is answered 400 and kept in `rejections` (so is
 * an unknown subscription, answered 404 like an expired one, and a body over 4096 octets, 413).
 * Test code only: never imported by src/.
 */
import { createECDH, createPublicKey, hkdfSync, createDecipheriv, randomBytes, verify, type ECDH, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface Delivery {
  endpoint: string;
  name: string | undefined;
  payload: unknown;
  ttl: number;
  urgency: string | undefined;
  topic: string | undefined;
  /** The VAPID JWT it came with (tests check that a token is reused for a push service). */
  vapidJwt: string;
}

export interface Rejection {
  endpoint: string;
  status: number;
  reason: string;
}

/** What a subscription's endpoint does instead of accepting: answer a status, or never answer. */
export type Behaviour = { status: number; retryAfter?: string; body?: string } | { hang: true };

export interface PushServiceStandIn {
  readonly origin: string;
  newSubscription(name?: string): SubscriptionJson;
  /** Decrypted payloads accepted for one subscription, in order. */
  received(endpointOrSubscription: string | SubscriptionJson): unknown[];
  all(): Delivery[];
  readonly rejections: Rejection[];
  /** POSTs received, accepted or not. */
  readonly requests: number;
  /** Checks made before `behave` applies: a strict service authenticates before it answers. */
  behave(endpointOrSubscription: string | SubscriptionJson, behaviour: Behaviour | undefined): void;
  /** When set, the VAPID `k` must be this key (base64url, uncompressed point). */
  expectVapidKey(publicKey: string | undefined): void;
  /** Forget deliveries and rejections (benchmarks that run many rounds). */
  reset(): void;
  close(): Promise<void>;
}

interface Subscriber {
  name: string | undefined;
  ecdh: ECDH;
  publicKey: Buffer;
  auth: Buffer;
  payloads: unknown[];
  behaviour: Behaviour | undefined;
}

class Refused extends Error {
  constructor(readonly status: number, reason: string) {
    super(reason);
  }
}

const MAX_BODY = 4096;
const DAY_SEC = 24 * 3600;

const b64u = (b: Buffer): string => b.toString('base64url');

function p256PublicKey(raw: Buffer): KeyObject {
  if (raw.length !== 65 || raw[0] !== 0x04) throw new Refused(400, 'VAPID k is not an uncompressed P-256 point');
  return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33)) }, format: 'jwk' });
}

/** RFC 8292 §3: `Authorization: vapid t=<JWT>, k=<public key>`; returns them for the expectation check. */
function checkVapid(header: string | undefined, origin: string, nowSec: number): { t: string; k: string } {
  const m = /^vapid\s+(.+)$/i.exec(header ?? '');
  if (!m?.[1]) throw new Refused(400, 'Authorization is not a vapid scheme');
  const params = new Map<string, string>();
  for (const part of m[1].split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) params.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const t = params.get('t');
  const k = params.get('k');
  if (!t || !k) throw new Refused(400, 'vapid Authorization lacks t or k');
  const [h, p, s] = t.split('.');
  if (h === undefined || p === undefined || s === undefined || t.split('.').length !== 3) throw new Refused(400, 'VAPID t is not a JWS');
  const jose = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: unknown };
  if (jose.alg !== 'ES256') throw new Refused(400, `VAPID JWT alg is ${String(jose.alg)}, not ES256`);
  const signature = Buffer.from(s, 'base64url');
  const valid = signature.length === 64 && verify('sha256', Buffer.from(`${h}.${p}`), { key: p256PublicKey(Buffer.from(k, 'base64url')), dsaEncoding: 'ieee-p1363' }, signature);
  if (!valid) throw new Refused(400, 'VAPID JWT signature does not verify with k');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud?: unknown; exp?: unknown; sub?: unknown };
  if (claims.aud !== origin) throw new Refused(400, `VAPID aud is ${String(claims.aud)}, not ${origin}`);
  if (typeof claims.exp !== 'number' || claims.exp <= nowSec) throw new Refused(400, 'VAPID exp is missing or past');
  if (claims.exp > nowSec + DAY_SEC) throw new Refused(400, 'VAPID exp is more than 24 hours ahead');
  if (typeof claims.sub !== 'string' || !/^(mailto:|https:)/.test(claims.sub)) throw new Refused(400, `VAPID sub ${String(claims.sub)} is not mailto: or https:`);
  return { t, k };
}

/** RFC 8188 record decryption with RFC 8291 key derivation; one record, delimiter 0x02. */
function decrypt(body: Buffer, sub: Subscriber): Buffer {
  if (body.length < 21) throw new Refused(400, 'aes128gcm body shorter than its header');
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20] ?? 0;
  if (idlen !== 65) throw new Refused(400, `aes128gcm keyid is ${idlen} octets, not the sender's 65-octet P-256 key`);
  const senderKey = body.subarray(21, 21 + idlen);
  const records = body.subarray(21 + idlen);
  if (rs < 18) throw new Refused(400, `aes128gcm record size ${rs} too small`);
  if (records.length > rs) throw new Refused(400, 'web push allows a single record (RFC 8291 §4)');
  if (records.length < 17) throw new Refused(400, 'aes128gcm record shorter than its tag');
  let secret: Buffer;
  try {
    secret = sub.ecdh.computeSecret(senderKey);
  } catch {
    throw new Refused(400, 'aes128gcm keyid is not a P-256 point');
  }
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), sub.publicKey, senderKey]);
  const ikm = Buffer.from(hkdfSync('sha256', secret, sub.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  // Record sequence number 0: the nonce is used as derived.
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(records.subarray(records.length - 16));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(records.subarray(0, records.length - 16)), decipher.final()]);
  } catch {
    throw new Refused(400, 'aes128gcm record does not decrypt (wrong keys, auth secret or derivation)');
  }
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (end < 0 || plain[end] !== 0x02) throw new Refused(400, 'aes128gcm last record lacks the 0x02 padding delimiter');
  return plain.subarray(0, end);
}

/** A header that must appear once; repeated, it is unusable. */
const one = (h: string | string[] | undefined): string | undefined => (Array.isArray(h) ? undefined : h);

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startPushService(opts: { vapidPublicKey?: string } = {}): Promise<PushServiceStandIn> {
  const subscribers = new Map<string, Subscriber>();
  let deliveries: Delivery[] = [];
  const rejections: Rejection[] = [];
  let expectedKey = opts.vapidPublicKey;
  let requests = 0;
  let origin = '';

  const idOf = (e: string | SubscriptionJson): string => {
    const endpoint = typeof e === 'string' ? e : e.endpoint;
    const prefix = `${origin}/push/`;
    if (!endpoint.startsWith(prefix)) throw new Error(`not an endpoint of this push service: ${endpoint}`);
    return endpoint.slice(prefix.length);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const endpoint = `${origin}${req.url ?? ''}`;
    const answer = (status: number, headers: Record<string, string> = {}, body = '') => {
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
    };
    if (req.method !== 'POST') return answer(405);
    requests++;
    const id = /^\/push\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '')?.[1];
    const sub = id === undefined ? undefined : subscribers.get(id);
    const body = await readBody(req);
    try {
      if (sub === undefined) throw new Refused(404, 'unknown subscription');
      if (body === undefined) throw new Refused(413, `body over ${MAX_BODY} octets`);
      const { t, k } = checkVapid(req.headers.authorization, origin, Math.floor(Date.now() / 1000));
      if (expectedKey !== undefined && k !== expectedKey) throw new Refused(400, 'VAPID k is not the key this subscription was made with');
      if (req.headers['content-encoding'] !== 'aes128gcm') throw new Refused(400, `Content-Encoding is ${String(req.headers['content-encoding'])}, not aes128gcm`);
      const ttlText = one(req.headers.ttl);
      const ttl = Number(ttlText);
      if (ttlText === undefined || !/^\d+$/.test(ttlText) || !Number.isSafeInteger(ttl)) throw new Refused(400, 'TTL header missing or not a number');
      const urgency = one(req.headers.urgency);
      if (urgency !== undefined && !['very-low', 'low', 'normal', 'high'].includes(urgency)) throw new Refused(400, `Urgency ${urgency} unknown`);
      const topic = one(req.headers.topic);
      if (topic !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(topic)) throw new Refused(400, 'Topic is not 1-32 base64url characters');
      const plain = decrypt(body, sub);
      let payload: unknown;
      try {
        payload = JSON.parse(plain.toString('utf8'));
      } catch {
        throw new Refused(400, 'decrypted payload is not JSON');
      }
      const behaviour = sub.behaviour;
      if (behaviour !== undefined) {
        if ('hang' in behaviour) return; // the socket stays open until the sender gives up or close()
        return answer(behaviour.status, behaviour.retryAfter !== undefined ? { 'retry-after': behaviour.retryAfter } : {}, behaviour.body ?? '');
      }
      sub.payloads.push(payload);
      deliveries.push({ endpoint, name: sub.name, payload, ttl, urgency, topic, vapidJwt: t });
      return answer(201, { location: `${origin}/message/${b64u(randomBytes(9))}` });
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      rejections.push({ endpoint, status: e.status, reason: e.message });
      return answer(e.status, {}, e.message);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      rejections.push({ endpoint: `${origin}${req.url ?? ''}`, status: 400, reason: `malformed request: ${e instanceof Error ? e.message : String(e)}` });
      if (!res.headersSent) res.writeHead(400).end('malformed request');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    newSubscription(name?: string): SubscriptionJson {
      const ecdh = createECDH('prime256v1');
      const publicKey = ecdh.generateKeys();
      const auth = randomBytes(16);
      const id = b64u(randomBytes(16));
      subscribers.set(id, { name, ecdh, publicKey, auth, payloads: [], behaviour: undefined });
      return { endpoint: `${origin}/push/${id}`, keys: { p256dh: b64u(publicKey), auth: b64u(auth) } };
    },
    received: (e) => [...(subscribers.get(idOf(e))?.payloads ?? [])],
    all: () => [...deliveries],
    rejections,
    get requests() {
      return requests;
    },
    behave(e, behaviour) {
      const sub = subscribers.get(idOf(e));
      if (sub === undefined) throw new Error('unknown subscription');
      sub.behaviour = behaviour;
    },
    expectVapidKey(publicKey) {
      expectedKey = publicKey;
    },
    reset() {
      deliveries = [];
      rejections.length = 0;
      for (const s of subscribers.values()) s.payloads = [];
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections(); // the hanging ones too
      }),
  };
}
