/**
 * Google's OAuth token endpoint and the FCM HTTP v1 send API on 127.0.0.1, for tests. It makes the
 * service account the test hands to the server, checks every assertion and message the way Google
 * documents them, and answers errors in Google's shape. A failed check is answered with Google's
 * status and kept in `rejections`. Test code only: never imported by src/.
 */
import { generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify, decodeProtectedHeader } from 'jose';

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface FcmMessage {
  token: string;
  data: Record<string, string>;
  android: { priority: string; ttl?: string; collapse_key?: string };
  /** The access token it came with. */
  accessToken: string;
}

export interface FcmRejection {
  path: string;
  status: number;
  reason: string;
}

/** A one-shot answer of the send API, instead of accepting the next message. */
export interface ScriptedAnswer {
  status: number;
  retryAfter?: string;
  /** FCM error code put in the details (UNREGISTERED, INVALID_ARGUMENT, QUOTA_EXCEEDED, ...). */
  errorCode?: string;
}

export interface FcmStandIn {
  readonly origin: string;
  /** What FCM_API_BASE is set to. */
  readonly apiBase: string;
  /** What FCM_TOKEN_URL is set to. */
  readonly tokenUrl: string;
  readonly projectId: string;
  /** The key file the operator would download (FCM_SERVICE_ACCOUNT_FILE's content). */
  serviceAccountJson(): string;
  /** Successful token exchanges so far. */
  readonly exchanges: number;
  messages(): FcmMessage[];
  readonly rejections: FcmRejection[];
  /** expires_in (seconds) of the access tokens issued from now on. */
  setExpiresIn(sec: number): void;
  /** The registration token no longer exists: sends to it get 404 UNREGISTERED. */
  unregister(token: string): void;
  /** Answers the next sends with these, in order, after the Bearer check. */
  script(...answers: ScriptedAnswer[]): void;
  /** Forgets every issued access token: the next send with one gets 401. */
  revokeAccessTokens(): void;
  close(): Promise<void>;
}

/** Google's error body (google.rpc.Status) with FCM's error code in the details. */
function googleError(status: number, rpcStatus: string, message: string, errorCode?: string): string {
  const details = errorCode === undefined ? [] : [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode }];
  return JSON.stringify({ error: { code: status, message, status: rpcStatus, details } });
}

const RPC_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const isStringRecord = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

export async function startFcmStandIn(opts: { clock?: { now(): number }; expiresIn?: number; projectId?: string } = {}): Promise<FcmStandIn> {
  const clock = opts.clock ?? { now: () => Date.now() };
  const projectId = opts.projectId ?? `mandate-test-${randomBytes(3).toString('hex')}`;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = randomBytes(20).toString('hex');
  const clientEmail = `push-sender@${projectId}.iam.gserviceaccount.com`;
  const issued = new Map<string, number>(); // access token -> expiry (ms)
  const unregistered = new Set<string>();
  const scripted: ScriptedAnswer[] = [];
  const messages: FcmMessage[] = [];
  const rejections: FcmRejection[] = [];
  let expiresIn = opts.expiresIn ?? 3599;
  let exchanges = 0;
  let origin = '';

  class Refused extends Error {
    constructor(readonly status: number, reason: string, readonly body: string, readonly retryAfter?: string) {
      super(reason);
    }
  }
  const oauthError = (reason: string) => new Refused(400, reason, JSON.stringify({ error: 'invalid_grant', error_description: reason }));
  const fcmError = (status: number, reason: string, errorCode?: string, retryAfter?: string) =>
    new Refused(status, reason, googleError(status, RPC_STATUS[status] ?? 'UNKNOWN', reason, errorCode), retryAfter);

  async function token(req: IncomingMessage): Promise<string> {
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) throw oauthError('body is not form-encoded');
    const form = new URLSearchParams(await readBody(req));
    if (form.get('grant_type') !== JWT_BEARER) throw new Refused(400, 'wrong grant_type', JSON.stringify({ error: 'unsupported_grant_type' }));
    const assertion = form.get('assertion');
    if (!assertion) throw oauthError('no assertion');
    const header = decodeProtectedHeader(assertion);
    if (header.kid !== keyId) throw oauthError(`kid ${String(header.kid)} is not the account's private_key_id`);
    let payload;
    try {
      ({ payload } = await jwtVerify(assertion, publicKey as KeyObject, {
        algorithms: ['RS256'],
        issuer: clientEmail,
        subject: clientEmail,
        audience: `${origin}/token`,
        currentDate: new Date(clock.now()),
        requiredClaims: ['iat', 'exp'],
      }));
    } catch (e) {
      throw oauthError(`assertion refused: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (typeof payload.scope !== 'string' || !payload.scope.split(' ').includes(FCM_SCOPE)) throw oauthError('scope lacks firebase.messaging');
    if ((payload.exp ?? 0) > (payload.iat ?? 0) + 3600) throw oauthError('exp more than an hour after iat');
    if ((payload.iat ?? 0) * 1000 > clock.now() + 60_000) throw oauthError('iat in the future');
    const accessToken = `ya29.${randomBytes(24).toString('base64url')}`;
    issued.set(accessToken, clock.now() + expiresIn * 1000);
    exchanges++;
    return JSON.stringify({ access_token: accessToken, expires_in: expiresIn, token_type: 'Bearer' });
  }

  async function send(req: IncomingMessage, path: string): Promise<string> {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const expiry = bearer === undefined ? undefined : issued.get(bearer);
    if (bearer === undefined || expiry === undefined || expiry <= clock.now()) {
      throw fcmError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    }
    const project = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path)?.[1];
    if (project !== projectId) throw fcmError(403, `project ${String(project)} is not the service account's`);
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      throw fcmError(400, 'body is not JSON');
    }
    const message = (body as { message?: unknown }).message as Record<string, unknown> | undefined;
    if (typeof message !== 'object' || message === null) throw fcmError(400, 'no message');
    const allowed = new Set(['token', 'data', 'android']);
    for (const k of Object.keys(message)) if (!allowed.has(k)) throw fcmError(400, `unexpected message field ${k} (data-only messages)`);
    if (typeof message.token !== 'string' || message.token === '') throw fcmError(400, 'message.token missing', 'INVALID_ARGUMENT');
    if (!isStringRecord(message.data)) throw fcmError(400, 'message.data values must all be strings', 'INVALID_ARGUMENT');
    const android = message.android as FcmMessage['android'] | undefined;
    if (typeof android !== 'object' || android === null || !['high', 'normal'].includes(android.priority)) throw fcmError(400, 'android.priority must be high or normal', 'INVALID_ARGUMENT');
    if (android.ttl !== undefined && !/^\d+(\.\d{1,9})?s$/.test(android.ttl)) throw fcmError(400, 'android.ttl is not a duration', 'INVALID_ARGUMENT');
    const next = scripted.shift();
    if (next !== undefined) throw fcmError(next.status, `scripted ${next.status}`, next.errorCode, next.retryAfter);
    if (unregistered.has(message.token)) throw fcmError(404, 'Requested entity was not found.', 'UNREGISTERED');
    messages.push({ token: message.token, data: message.data, android, accessToken: bearer });
    return JSON.stringify({ name: `projects/${projectId}/messages/${randomUUID()}` });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '';
    try {
      if (req.method !== 'POST') throw fcmError(404, 'not found');
      const body = path === '/token' ? await token(req) : await send(req, path);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      // Scripted answers are what the test asked for, not a fault of the sender.
      if (!e.message.startsWith('scripted')) rejections.push({ path: path.split('?')[0] ?? '', status: e.status, reason: e.message });
      res.writeHead(e.status, { 'content-type': 'application/json', ...(e.retryAfter !== undefined ? { 'retry-after': e.retryAfter } : {}) }).end(e.body);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      rejections.push({ path: req.url ?? '', status: 500, reason: e instanceof Error ? e.message : String(e) });
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    apiBase: origin,
    tokenUrl: `${origin}/token`,
    projectId,
    serviceAccountJson: () =>
      JSON.stringify({
        type: 'service_account',
        project_id: projectId,
        private_key_id: keyId,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: clientEmail,
        client_id: String(Math.floor(Math.random() * 1e20)),
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: `${origin}/token`,
      }),
    get exchanges() {
      return exchanges;
    },
    messages: () => [...messages],
    rejections,
    setExpiresIn(sec) {
      expiresIn = sec;
    },
    unregister(t) {
      unregistered.add(t);
    },
    script(...answers) {
      scripted.push(...answers);
    },
    revokeAccessTokens() {
      issued.clear();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
