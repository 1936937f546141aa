/**
 * SMS through Twilio's Programmable Messaging API (decisions §14): a form POST to
 * `${TWILIO_API_BASE}/2010-04-01/Accounts/{sid}/Messages.json` with HTTP Basic (account sid, auth
 * token) and the fields To, From, Body.
 *
 * Not through the outbound guard (decisions §24): the guard is for addresses someone else chose
 * (an owner's site, a browser's push endpoint). TWILIO_API_BASE is the operator's own provider, set
 * in the service's configuration like SMTP_URL and the FCM endpoints, and tests (or an operator's
 * egress proxy) legitimately point it at a private or loopback address the guard would refuse.
 *
 * The auth token never leaves this file except in the Authorization header: error details are built
 * from Twilio's `code` and `message` only, with the token, the message text and the Basic header
 * taken out should an answer ever echo them. The Body (which holds a one-time code) is never logged.
 */
import { parseRetryAfter } from '../retry-after.ts';
import { defineSmsProvider, type SmsResult, type SmsSender } from '../sms-port.ts';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  from: string;
  apiBase: string;
}

/** One send takes at most this long: well under an outbox claim (OUTBOX_CLAIM_SECONDS, 60 s by default). */
const TIMEOUT_MS = 10_000;

export const twilioMessagesPath = (sid: string): string => `/2010-04-01/Accounts/${encodeURIComponent(sid)}/Messages.json`;

export function twilioSender(s: TwilioSettings, deps: { clock: { now(): number }; fetch?: typeof fetch }): SmsSender {
  const doFetch = deps.fetch ?? fetch;
  const url = `${s.apiBase}${twilioMessagesPath(s.accountSid)}`;
  const basic = Buffer.from(`${s.accountSid}:${s.authToken}`).toString('base64');
  return {
    async send(sms) {
      const scrub = (text: string): string => [s.authToken, basic, sms.text].filter((x) => x.length >= 4).reduce((t, x) => t.split(x).join('[redacted]'), text);
      let response: Response;
      try {
        response = await doFetch(url, {
          method: 'POST',
          headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({ To: sms.to, From: s.from, Body: sms.text }).toString(),
          redirect: 'error',
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (e) {
        const timeout = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
        return { outcome: 'retry', detail: `Twilio not reached: ${timeout ? 'timeout' : 'network error'}` };
      }
      const text = await response.text().catch(() => '');
      return outcomeOf(response.status, text, response.headers.get('retry-after'), deps.clock.now(), scrub);
    },
  };
}

/**
 * 2xx: sent. 429: retry after its Retry-After (as push does). 5xx and 408: retry. 401/403: retry
 * (the account's credentials or standing, which the operator can fix before the code expires).
 * Other 4xx (Twilio 21211 invalid To, 21610 unsubscribed recipient, ...): failed, not retried.
 */
export function outcomeOf(status: number, body: string, retryAfter: string | null, now: number, scrub: (t: string) => string): SmsResult {
  if (status >= 200 && status < 300) return { outcome: 'sent' };
  let said = '';
  try {
    const j = JSON.parse(body) as { code?: unknown; message?: unknown };
    said = [typeof j.code === 'number' || typeof j.code === 'string' ? `code ${j.code}` : '', typeof j.message === 'string' ? j.message : ''].filter(Boolean).join(': ');
  } catch {
    // not JSON (a proxy's page): the status alone says it
  }
  const detail = scrub(`Twilio answered ${status}${said ? ` (${said})` : ''}`).slice(0, 300);
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(retryAfter, now);
    return retryAfterMs === undefined ? { outcome: 'retry', detail } : { outcome: 'retry', detail, retryAfterMs };
  }
  if (status >= 500 || status === 408 || status === 401 || status === 403) return { outcome: 'retry', detail };
  return { outcome: 'failed', detail };
}

/** TWILIO_API_BASE: an http(s) URL (tests point it at a stand-in; an operator maybe at an egress proxy). */
function checkApiBase(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:' ? undefined : `must be an http(s) URL, got "${value}"`;
  } catch {
    return `is not a URL: "${value}"`;
  }
}

/** This file is the whole provider: the registry (../sms-providers.ts) finds it by its folder. */
export const smsProvider = defineSmsProvider<TwilioSettings>({
  name: 'twilio',
  settings: [
    {
      key: 'TWILIO_ACCOUNT_SID',
      about: 'the Account SID from the Twilio console (AC followed by 32 hex digits)',
      required: true,
      check: (v) => (/^AC[0-9a-fA-F]{32}$/.test(v) ? undefined : 'must be AC followed by 32 hex digits (the Account SID from the Twilio console)'),
    },
    { key: 'TWILIO_AUTH_TOKEN', about: 'the Auth Token from the Twilio console', required: true, secret: true },
    { key: 'TWILIO_FROM', about: 'the sending number in E.164 (+15005550006) or a Messaging Service SID (MG...)', required: true },
    { key: 'TWILIO_API_BASE', about: "the API's base address", default: 'https://api.twilio.com', check: checkApiBase },
  ],
  configure(values) {
    const base = new URL(values.TWILIO_API_BASE ?? 'https://api.twilio.com');
    return {
      accountSid: values.TWILIO_ACCOUNT_SID ?? '',
      authToken: values.TWILIO_AUTH_TOKEN ?? '',
      from: values.TWILIO_FROM ?? '',
      apiBase: base.origin + base.pathname.replace(/\/+$/, ''),
    };
  },
  sender: (settings, deps) => twilioSender(settings, deps),
});
