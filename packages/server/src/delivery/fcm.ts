/**
 * Android pushes through the FCM HTTP v1 API. Data-only messages: the app builds the notification
 * itself, so that approval actions and quiet hours work the same as on the web. The addresses are
 * the operator's (FCM_API_BASE, FCM_TOKEN_URL), not a user's, so this uses a plain fetch with its own
 * timeout rather than the outbound guard. Registration and access tokens never reach a detail.
 */
import { signServiceAccountAssertion, type ServiceAccount } from '../crypto/service-account-jwt.ts';
import type { PushOptions, PushPayload, PushTransport, SendResult } from './push-port.ts';
import { parseRetryAfter } from './retry-after.ts';

export type { ServiceAccount } from '../crypto/service-account-jwt.ts';

export const FCM_API_BASE = 'https://fcm.googleapis.com';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** An access token is renewed this long before Google says it ends, so no send carries a dying one. */
const RENEW_EARLY_MS = 60_000;
const TIMEOUT_MS = 10_000;

export interface FcmTransportOptions {
  projectId: string;
  serviceAccount: ServiceAccount;
  /** FCM_API_BASE; https://fcm.googleapis.com unless set. */
  apiBase?: string;
  /** FCM_TOKEN_URL; https://oauth2.googleapis.com/token unless set. */
  tokenUrl?: string;
  clock: { now(): number };
  fetch?: typeof globalThis.fetch;
}

export interface FcmTarget {
  /** The app's FCM registration token. */
  token: string;
}

/** A send that cannot go on, with the outcome it ends in. */
class Stop extends Error {
  constructor(readonly result: Exclude<SendResult, { outcome: 'sent' }>) {
    super(result.detail);
  }
}

interface GoogleError {
  status?: string;
  message?: string;
  details?: { '@type'?: string; errorCode?: string }[];
}

function googleError(text: string): GoogleError {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed && typeof parsed.error === 'object' && parsed.error !== null) {
      return parsed.error as GoogleError;
    }
  } catch {
    // not JSON: a proxy's page; the status code alone decides
  }
  return {};
}

/** FCM's own error code (UNREGISTERED, INVALID_ARGUMENT, QUOTA_EXCEEDED, ...) from the details list. */
function fcmErrorCode(error: GoogleError): string | undefined {
  return Array.isArray(error.details) ? error.details.find((d) => typeof d?.errorCode === 'string')?.errorCode : undefined;
}

/** Every payload field as a string: FCM data values must be strings. An object (`details`) goes as its JSON. */
function dataOf(payload: PushPayload): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload) as [string, unknown][]) {
    if (value === undefined || value === null) continue;
    data[key] = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return data;
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
}

/**
 * Reads a service account key file (FCM_SERVICE_ACCOUNT_FILE). Errors name the missing or wrong
 * fields and never quote the file: it holds a private key.
 */
export function parseServiceAccount(json: string): ServiceAccount {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    // JSON.parse's message quotes the text around the fault, which may be the private key.
    throw new Error('FCM service account: the file is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('FCM service account: the file is not a JSON object');
  const o = parsed as Record<string, unknown>;
  const text = (name: string): string | undefined => (typeof o[name] === 'string' && o[name] !== '' ? (o[name] as string) : undefined);
  const missing = ['type', 'client_email', 'private_key', 'private_key_id'].filter((name) => text(name) === undefined);
  if (missing.length > 0) throw new Error(`FCM service account: missing ${missing.join(', ')} (download a key of type service_account from the Google Cloud console)`);
  if (o.type !== 'service_account') throw new Error(`FCM service account: type is "${String(o.type).slice(0, 40)}", expected "service_account"`);
  if (!String(o.client_email).includes('@')) throw new Error('FCM service account: client_email is not an email address');
  if (!/-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(String(o.private_key))) {
    throw new Error('FCM service account: private_key is not a PKCS#8 PEM key (-----BEGIN PRIVATE KEY-----)');
  }
  for (const name of ['token_uri', 'project_id']) {
    if (o[name] !== undefined && text(name) === undefined) throw new Error(`FCM service account: ${name} must be a non-empty string`);
  }
  const account: ServiceAccount = {
    type: 'service_account',
    client_email: String(o.client_email),
    private_key: String(o.private_key),
    private_key_id: String(o.private_key_id),
  };
  const tokenUri = text('token_uri');
  const projectId = text('project_id');
  if (tokenUri !== undefined) account.token_uri = tokenUri;
  if (projectId !== undefined) account.project_id = projectId;
  return account;
}

export function fcmTransport(opts: FcmTransportOptions): PushTransport<FcmTarget> {
  const doFetch = opts.fetch ?? globalThis.fetch;
  const apiBase = (opts.apiBase ?? FCM_API_BASE).replace(/\/+$/, '');
  const tokenUrl = opts.tokenUrl ?? GOOGLE_TOKEN_URL;
  const sendUrl = `${apiBase}/v1/projects/${encodeURIComponent(opts.projectId)}/messages:send`;
  let cached: { token: string; renewAt: number } | undefined;
  let exchanging: Promise<string> | undefined;

  /** Secrets to keep out of a detail made from an answer's text. */
  const redact = (text: string, secrets: readonly string[]): string => {
    let out = text.replace(/[^\x20-\x7e]+/g, ' ').slice(0, 300);
    for (const s of secrets) if (s.length >= 8) out = out.split(s).join('[redacted]');
    return out.length > 200 ? `${out.slice(0, 200)}...` : out;
  };

  async function exchange(): Promise<string> {
    const startedAt = opts.clock.now();
    const assertion = await signServiceAccountAssertion(opts.serviceAccount, { aud: tokenUrl, scope: SCOPE, now: startedAt });
    let response: Response;
    let text: string;
    try {
      response = await doFetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      text = await response.text();
    } catch (e) {
      throw new Stop({ outcome: 'retry', detail: `FCM token exchange not completed: ${isTimeout(e) ? 'timeout' : 'network'}` });
    }
    if (!response.ok) {
      // OAuth errors are {error, error_description}; they name the fault (invalid_grant: bad key or clock), never the key.
      let said = '';
      try {
        const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
        said = [body.error, body.error_description].filter((v) => typeof v === 'string').join(': ');
      } catch {
        // not JSON
      }
      const detail = `FCM token exchange answered ${response.status}${said ? ` (${redact(said, [assertion])})` : ''}`;
      const passing = response.status === 429 || response.status >= 500;
      const retryAfterMs = passing ? parseRetryAfter(response.headers.get('retry-after'), opts.clock.now()) : undefined;
      throw new Stop(passing ? { outcome: 'retry', detail, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) } : { outcome: 'failed', detail });
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = {};
    }
    if (typeof body.access_token !== 'string' || body.access_token === '' || typeof body.expires_in !== 'number') {
      throw new Stop({ outcome: 'retry', detail: 'FCM token exchange answered without access_token and expires_in' });
    }
    cached = { token: body.access_token, renewAt: startedAt + body.expires_in * 1000 - RENEW_EARLY_MS };
    return body.access_token;
  }

  /** The cached access token, or the one exchange in flight that every concurrent send waits for. */
  function accessToken(): Promise<string> {
    if (cached !== undefined && opts.clock.now() < cached.renewAt) return Promise.resolve(cached.token);
    exchanging ??= exchange().finally(() => {
      exchanging = undefined;
    });
    return exchanging;
  }

  async function post(target: FcmTarget, accessTokenValue: string, payload: PushPayload, options: PushOptions): Promise<{ status: number; text: string; retryAfter: string | null }> {
    const message = {
      token: target.token,
      data: dataOf(payload),
      android: {
        // NORMAL may wait for the phone's maintenance window in Doze; only urgent pushes should wake it.
        priority: options.urgency === 'high' ? 'high' : 'normal',
        ttl: `${options.ttlSec}s`,
        ...(options.topic !== undefined ? { collapse_key: options.topic } : {}),
      },
    };
    try {
      const response = await doFetch(sendUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessTokenValue}`, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ message }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      return { status: response.status, text: await response.text(), retryAfter: response.headers.get('retry-after') };
    } catch (e) {
      throw new Stop({ outcome: 'retry', detail: `FCM send not completed: ${isTimeout(e) ? 'timeout' : 'network'}` });
    }
  }

  function outcome(answer: { status: number; text: string; retryAfter: string | null }, secrets: readonly string[]): SendResult {
    const { status } = answer;
    if (status === 200) return { outcome: 'sent' };
    const error = googleError(answer.text);
    const code = fcmErrorCode(error);
    const what = [error.status, code].filter((v) => v !== undefined && v !== '').join('/');
    const message = typeof error.message === 'string' ? redact(error.message, secrets) : '';
    const detail = `FCM answered ${status}${what ? ` ${what}` : ''}${message ? `: ${message}` : ''}`;
    // Only a registration FCM says no longer exists is removed; a malformed one (INVALID_ARGUMENT) is
    // kept as failed, so a bug of ours in building messages cannot wipe every Android device.
    if (status === 404 || code === 'UNREGISTERED') return { outcome: 'gone', detail };
    if (status === 429 || status >= 500) {
      const retryAfterMs = parseRetryAfter(answer.retryAfter, opts.clock.now());
      return retryAfterMs === undefined ? { outcome: 'retry', detail } : { outcome: 'retry', detail, retryAfterMs };
    }
    return { outcome: 'failed', detail };
  }

  return {
    async send(target: FcmTarget, payload: PushPayload, options: PushOptions): Promise<SendResult> {
      try {
        let token = await accessToken();
        let answer = await post(target, token, payload, options);
        if (answer.status === 401) {
          // Revoked or expired early on Google's side: drop it (unless a concurrent send already
          // renewed it) and try once more with a fresh one; a second 401 is a configuration fault.
          if (cached?.token === token) cached = undefined;
          token = await accessToken();
          answer = await post(target, token, payload, options);
        }
        return outcome(answer, [target.token, token]);
      } catch (e) {
        if (e instanceof Stop) return e.result;
        // Signing failed (a key jose cannot use): nothing a later try would change.
        return { outcome: 'failed', detail: `FCM send not possible: ${e instanceof Error ? e.name : 'unknown error'}` };
      }
    },
  };
}
