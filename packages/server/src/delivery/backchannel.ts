/**
 * Back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.5; decisions §12, §18): tells a
 * relying party that a sign-in ended by POSTing a `logout_token` form to the client's registered
 * `backchannel_logout_uri`. That address was chosen by the client's owner, so every request goes
 * through the outbound guard of decisions §24. The answer becomes a SendResult for the outbox,
 * which retries passing failures for 15 minutes.
 */
import type { Clock } from '../clock.ts';
import { signLogoutToken } from '../crypto/logout-token.ts';
import type { SigningKeys } from '../crypto/signing-keys.ts';
import { OutboundError, type OutboundFetch, type OutboundRefusal } from '../outbound/types.ts';
import type { SendResult } from './push-port.ts';
import { parseRetryAfter } from './retry-after.ts';

/** One logout to one client: what the outbox message holds (never the token itself). */
export interface BackchannelLogout {
  uri: string;
  clientId: string;
  sub: string;
  sid: string;
}

export interface BackchannelTransport {
  send(message: BackchannelLogout): Promise<SendResult>;
}

export interface BackchannelTransportOptions {
  fetch: OutboundFetch;
  keys: SigningKeys;
  /** The service's base URL: the token's `iss`. */
  issuer: string;
  clock: Clock;
}

/** Refusals a later try may get through (a restarting RP, a DNS hiccup); the others would repeat. */
const PASSING: ReadonlySet<OutboundRefusal> = new Set(['timeout', 'network', 'dns']);

/** The RP's own words (§2.8: a 400 may carry an error body) help the client's owner; bounded, token removed. */
function snippet(body: Buffer, token: string): string {
  const text = body.subarray(0, 300).toString('utf8').split(token).join('[token]').replace(/[^\x20-\x7e]+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** Only the origin appears in details and logs: a registered URI's path or query may hold a secret. */
function originOf(uri: string): string {
  try {
    return new URL(uri).origin;
  } catch {
    return 'an unparsable address';
  }
}

export function backchannelTransport(opts: BackchannelTransportOptions): BackchannelTransport {
  return {
    async send(message) {
      const rp = originOf(message.uri);
      let token: string;
      try {
        // Signed at send time: each try carries its own iat, exp and jti (an RP refuses a replayed jti).
        token = await signLogoutToken(opts.keys, { iss: opts.issuer, aud: message.clientId, sub: message.sub, sid: message.sid, now: opts.clock.now() });
      } catch (e) {
        return { outcome: 'retry', detail: `could not sign the logout token: ${e instanceof Error ? e.message : 'unknown error'}` };
      }
      let response;
      try {
        response = await opts.fetch(message.uri, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({ logout_token: token }).toString(),
        });
      } catch (e) {
        if (e instanceof OutboundError) {
          const detail = `back-channel logout to ${rp} not completed: ${e.reason}: ${e.message}`;
          return PASSING.has(e.reason) ? { outcome: 'retry', detail } : { outcome: 'failed', detail };
        }
        return { outcome: 'retry', detail: `back-channel logout to ${rp} not completed: network` };
      }
      const { status } = response;
      if (status >= 200 && status < 300) return { outcome: 'sent' };
      const said = snippet(response.body, token);
      const detail = `back-channel logout to ${rp} answered ${status}${said ? `: ${said}` : ''}`;
      if (status === 408 || status === 429 || status >= 500) {
        const retryAfterMs = parseRetryAfter(response.headers['retry-after'], opts.clock.now());
        return retryAfterMs === undefined ? { outcome: 'retry', detail } : { outcome: 'retry', detail, retryAfterMs };
      }
      // 400 is the RP refusing this token (§2.8); 3xx (never followed), 401, 404 and the rest mean a
      // wrong registration, which sending again would not mend.
      return { outcome: 'failed', detail };
    },
  };
}
