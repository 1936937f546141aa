/**
 * Web push (RFC 8030) to browser subscriptions: the `web-push` library builds each request (RFC 8291
 * aes128gcm encryption, RFC 8292 VAPID header, the latter kept per push service) and the outbound guard of decisions §24 sends it, since the
 * endpoint is an address the browser (so, anyone) chose. The answer becomes a SendResult for the
 * outbox. Details never carry keys, payloads, endpoints' paths or the Authorization header.
 */
import { createECDH } from 'node:crypto';
import webpush from 'web-push';
import { OutboundError, type OutboundFetch, type OutboundRefusal } from '../outbound/types.ts';
import type { PushHostPolicy } from '../outbound/push-hosts.ts';
import type { PushOptions, PushPayload, PushTransport, SendResult, WebPushTarget } from './push-port.ts';
import { parseRetryAfter } from './retry-after.ts';

/**
 * The largest plaintext one aes128gcm record of 4096 octets holds (RFC 8291 §4): 4096 minus the
 * 86-octet header, the 16-octet tag and the padding delimiter. Push services need not take more.
 */
export const MAX_PAYLOAD_BYTES = 3993;

export interface VapidKeys {
  /** base64url, uncompressed P-256 point (65 octets): what `GET /api/push/keys` publishes. */
  publicKey: string;
  /** base64url, the 32-octet private scalar. */
  privateKey: string;
}

export interface WebPushTransportOptions {
  /** `subject`: a `mailto:` or `https:` URL where a push service can reach the operator (RFC 8292 §2.1). */
  vapid: VapidKeys & { subject: string };
  fetch: OutboundFetch;
  /** Reads `Retry-After` dates; the system clock unless a test fixes it. */
  clock?: { now(): number };
  /**
   * PUSH_SERVICE_HOSTS: an endpoint registered before the list (or under a longer one) is not sent
   * to; its messages fail with the reason. Absent: any host the guard allows.
   */
  hosts?: PushHostPolicy;
}

export function generateVapidKeys(): VapidKeys {
  const { publicKey, privateKey } = webpush.generateVAPIDKeys();
  return { publicKey, privateKey };
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** True when both are base64url and the public key is the private key's point, as VAPID needs. */
export function isValidVapidKeyPair(publicKey: string, privateKey: string): boolean {
  if (!BASE64URL.test(publicKey) || !BASE64URL.test(privateKey)) return false;
  const pub = Buffer.from(publicKey, 'base64url');
  const priv = Buffer.from(privateKey, 'base64url');
  if (pub.length !== 65 || priv.length !== 32) return false;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(priv);
    return ecdh.getPublicKey().equals(pub);
  } catch {
    return false; // zero or out of the curve's order
  }
}

/** RFC 8292 §2.1; the library checks the same, but only when the first push is built. */
function isValidSubject(subject: string): boolean {
  try {
    const url = new URL(subject);
    return url.protocol === 'mailto:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Refused fetches that a later try may get through; the others would be refused again. */
const PASSING: ReadonlySet<OutboundRefusal> = new Set(['timeout', 'network', 'dns']);

/** A push service's own words help diagnosis; bounded and stripped of anything we sent. */
function snippet(body: Buffer, secrets: readonly string[]): string {
  let text = body.subarray(0, 300).toString('utf8').replace(/[^\x20-\x7e]+/g, ' ').trim();
  for (const s of secrets) if (s.length >= 8) text = text.split(s).join('[redacted]');
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'an unparsable endpoint';
  }
}

/**
 * RFC 8292 §2 lets one VAPID token serve many requests to the same push service, and signing one is
 * two thirds of the library's cost per push (bench/push-fanout.ts). A token is valid 12 hours (the
 * library's default) and re-signed after one, so a push service never sees an old token.
 */
const VAPID_REUSE_MS = 3600_000;
/** Push services are a handful (Google, Mozilla, Apple, Microsoft); the bound keeps odd endpoints from growing it. */
const VAPID_ORIGINS_KEPT = 64;

function vapidSigner(vapid: VapidKeys & { subject: string }): (audience: string) => string {
  const tokens = new Map<string, { authorization: string; signedAt: number }>();
  return (audience) => {
    // Real time, not an injected clock: the push service judges `exp` by its own.
    const now = Date.now();
    const kept = tokens.get(audience);
    if (kept !== undefined && now - kept.signedAt < VAPID_REUSE_MS) return kept.authorization;
    const { Authorization } = webpush.getVapidHeaders(audience, vapid.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm');
    tokens.delete(audience);
    if (tokens.size >= VAPID_ORIGINS_KEPT) tokens.delete(tokens.keys().next().value ?? '');
    tokens.set(audience, { authorization: Authorization, signedAt: now });
    return Authorization;
  };
}

/**
 * A push transport for web push subscriptions. Throws at once when the VAPID keys or subject are
 * unusable, so a bad configuration stops the start instead of failing every push.
 */
export function webPushTransport(opts: WebPushTransportOptions): PushTransport<WebPushTarget> {
  const { vapid } = opts;
  if (!isValidVapidKeyPair(vapid.publicKey, vapid.privateKey)) {
    throw new Error('VAPID keys: the public key is not the private key\'s P-256 point (both base64url: 65 and 32 octets)');
  }
  if (!isValidSubject(vapid.subject)) throw new Error('VAPID subject must be a mailto: or https: URL');
  const vapidAuthorization = vapidSigner(vapid);
  const now = () => (opts.clock ?? Date).now();

  return {
    async send(target: WebPushTarget, payload: PushPayload, options: PushOptions): Promise<SendResult> {
      const json = JSON.stringify(payload);
      const size = Buffer.byteLength(json);
      if (size > MAX_PAYLOAD_BYTES) return { outcome: 'failed', detail: `payload of ${size} bytes is over the web push limit of ${MAX_PAYLOAD_BYTES}` };
      const secrets = [vapid.privateKey, target.p256dh, target.auth, target.endpoint];
      const refused = opts.hosts?.problem(target.endpoint);
      if (refused) return { outcome: 'failed', detail: refused };

      const headers: Record<string, string> = {};
      let body: Buffer | null;
      try {
        // The VAPID header is added below from the per-service token (so no vapidDetails here).
        const request = webpush.generateRequestDetails({ endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } }, json, {
          TTL: options.ttlSec,
          urgency: options.urgency,
          ...(options.topic !== undefined ? { topic: options.topic } : {}),
          contentEncoding: 'aes128gcm',
        });
        // The library types every header as a string but gives TTL and Content-Length as numbers.
        for (const [name, value] of Object.entries(request.headers)) headers[name] = String(value);
        // The audience is the endpoint's origin (RFC 8292 §2), as the library would compute it.
        headers.Authorization = vapidAuthorization(new URL(target.endpoint).origin);
        body = request.body;
      } catch (e) {
        // The library's messages name the faulty field, never its value (bad p256dh, topic, endpoint).
        const why = e instanceof Error ? snippet(Buffer.from(e.message), secrets) : 'unknown error';
        return { outcome: 'failed', detail: `could not build the push request: ${why}` };
      }
      secrets.push(headers.Authorization ?? '');

      const service = originOf(target.endpoint);
      let response;
      try {
        response = await opts.fetch(target.endpoint, { method: 'POST', headers, ...(body !== null ? { body } : {}) });
      } catch (e) {
        // The guard's message may quote the endpoint; its reason says all the outbox needs.
        if (e instanceof OutboundError) {
          const detail = `push to ${service} not completed: ${e.reason}`;
          return PASSING.has(e.reason) ? { outcome: 'retry', detail } : { outcome: 'failed', detail };
        }
        return { outcome: 'retry', detail: `push to ${service} not completed: network` };
      }

      const { status } = response;
      if (status === 200 || status === 201 || status === 202) return { outcome: 'sent' };
      const said = snippet(response.body, secrets);
      const detail = `push service ${service} answered ${status}${said ? `: ${said}` : ''}`;
      if (status === 404 || status === 410) return { outcome: 'gone', detail };
      if (status === 429 || status >= 500) {
        const retryAfterMs = parseRetryAfter(response.headers['retry-after'], now());
        return retryAfterMs === undefined ? { outcome: 'retry', detail } : { outcome: 'retry', detail, retryAfterMs };
      }
      // 400 (bad request, bad VAPID), 401/403 (key mismatch), 413 (too large) and the rest: for good.
      return { outcome: 'failed', detail };
    },
  };
}
