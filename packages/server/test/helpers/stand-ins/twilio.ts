/**
 * Twilio's Programmable Messaging API on 127.0.0.1, for tests. Every request is checked as Twilio
 * would: POST to `/2010-04-01/Accounts/{sid}/Messages.json` of the configured account, HTTP Basic
 * with that sid and auth token, a form body (application/x-www-form-urlencoded) with To (E.164),
 * From (the configured sender) and a non-empty Body, and nothing else. A failed check is answered
 * the way Twilio answers (401 code 20003 for bad credentials, 404 for another path, 400 code 21211
 * and the like for bad fields) and kept in `rejections`. Accepted messages are kept in `messages`.
 * `behave` makes the next answers something else (a 429 with Retry-After, a 500, a 400) after the
 * checks. Test code only: never imported by src/.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface TwilioMessage {
  to: string;
  from: string;
  body: string;
}

export interface TwilioRejection {
  status: number;
  reason: string;
}

export type TwilioBehaviour = { status: number; retryAfter?: string; body?: string };

export interface TwilioStandIn {
  readonly origin: string;
  readonly accountSid: string;
  readonly authToken: string;
  readonly from: string;
  /** The env for the service: SMS_PROVIDER=twilio pointed at this stand-in. */
  readonly env: Record<string, string>;
  readonly messages: TwilioMessage[];
  readonly rejections: TwilioRejection[];
  /** Requests received, accepted or not. */
  readonly requests: number;
  /** The next `times` requests that pass the checks get `behaviour` instead of 201. */
  behave(behaviour: TwilioBehaviour, times?: number): void;
  /** The 6-digit code of the newest message to `to`. */
  lastCode(to: string): string | undefined;
  close(): Promise<void>;
}

const twilioError = (status: number, code: number, message: string) => JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

export async function startTwilioStandIn(opts: { from?: string } = {}): Promise<TwilioStandIn> {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const from = opts.from ?? '+15005550006';
  const messages: TwilioMessage[] = [];
  const rejections: TwilioRejection[] = [];
  const queued: TwilioBehaviour[] = [];
  let requests = 0;

  const reject = (res: ServerResponse, status: number, code: number, reason: string) => {
    rejections.push({ status, reason });
    res.writeHead(status, { 'content-type': 'application/json' }).end(twilioError(status, code, reason));
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    requests++;
    const path = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
    if (req.url !== path) return reject(res, 404, 20404, `The requested resource ${req.url} was not found`);
    if (req.method !== 'POST') return reject(res, 405, 20004, `Method not allowed: ${req.method}`);
    const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return reject(res, 401, 20003, 'Authenticate');
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return reject(res, 400, 21620, 'content-type must be application/x-www-form-urlencoded');
    const form = new URLSearchParams(raw);
    const keys = [...form.keys()].sort();
    if (keys.join(',') !== 'Body,From,To') return reject(res, 400, 21603, `expected exactly the fields To, From, Body; got ${keys.join(',')}`);
    const to = form.get('To') ?? '';
    const sender = form.get('From') ?? '';
    const body = form.get('Body') ?? '';
    if (!/^\+[1-9]\d{6,14}$/.test(to)) return reject(res, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    if (sender !== from) return reject(res, 400, 21212, `The 'From' number ${sender} is not a valid phone number, shortcode, or alphanumeric sender ID.`);
    if (body.length === 0 || body.length > 1600) return reject(res, 400, 21602, 'Message body is required and at most 1600 characters.');
    const behaviour = queued.shift();
    if (behaviour) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
      res.writeHead(behaviour.status, headers).end(behaviour.body ?? twilioError(behaviour.status, behaviour.status === 429 ? 20429 : 30001, `stand-in answered ${behaviour.status}`));
      return;
    }
    messages.push({ to, from: sender, body });
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sid: `SM${randomBytes(16).toString('hex')}`, account_sid: accountSid, to, from: sender, body, status: 'queued' }));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    accountSid,
    authToken,
    from,
    env: { SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: accountSid, TWILIO_AUTH_TOKEN: authToken, TWILIO_FROM: from, TWILIO_API_BASE: origin },
    messages,
    rejections,
    get requests() {
      return requests;
    },
    behave(behaviour, times = 1) {
      for (let i = 0; i < times; i++) queued.push(behaviour);
    },
    lastCode(to) {
      const m = [...messages].reverse().find((x) => x.to === to);
      return m?.body.match(/\b(\d{6})\b/)?.[1];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
