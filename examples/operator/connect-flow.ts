// "Connect your Mandate account": OAuth's authorization code flow with PKCE (S256 only; Mandate
// refuses plain). Each attempt gets a fresh verifier and state, kept here on the server, never in
// the page; the state also goes into a cookie, so that only the browser that started an attempt can
// finish it (someone else's callback link pasted into your browser is refused).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { OperatorConfig } from './config.ts';

/** An attempt not finished within this time is forgotten (the person starts again). */
const ATTEMPT_MS = 10 * 60_000;

type Attempt = { verifier: string; expiresAt: number };

export type CallbackResult =
  | { ok: true; code: string; verifier: string }
  | { ok: false; status: number; reason: string };

export class ConnectFlow {
  readonly #attempts = new Map<string, Attempt>();

  constructor(private readonly cfg: Pick<OperatorConfig, 'issuer' | 'operatorId' | 'redirectUri'>) {}

  /** A new attempt: the /connect address to send the browser to, and the state for its cookie. */
  start(now = Date.now()): { location: string; state: string } {
    this.#forgetExpired(now);
    const verifier = randomBytes(32).toString('base64url'); // 43 characters, as PKCE asks
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const state = randomBytes(16).toString('base64url');
    this.#attempts.set(state, { verifier, expiresAt: now + ATTEMPT_MS });
    const link = new URL('/connect', this.cfg.issuer);
    link.search = new URLSearchParams({
      operator: this.cfg.operatorId,
      redirect_uri: this.cfg.redirectUri, // exactly as registered
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    return { location: link.toString(), state };
  }

  /**
   * The person is back at the redirect URI. The attempt is used up whatever the outcome: a state
   * works once. `iss` must be the Mandate we sent the person to (OAuth's mix-up defence).
   */
  finish(query: URLSearchParams, cookieState: string | undefined, now = Date.now()): CallbackResult {
    const state = query.get('state') ?? '';
    const attempt = this.#attempts.get(state);
    this.#attempts.delete(state);
    if (!attempt || attempt.expiresAt < now) return { ok: false, status: 400, reason: 'unknown or expired connection attempt: start again' };
    if (!cookieState || !sameText(cookieState, state)) return { ok: false, status: 400, reason: 'this connection was started in another browser: start again here' };
    if (query.get('iss') !== this.cfg.issuer) return { ok: false, status: 400, reason: `the answer does not come from ${this.cfg.issuer}` };
    if (query.get('error') === 'access_denied') return { ok: false, status: 200, reason: 'you did not connect your Mandate account' };
    const code = query.get('code');
    if (!code) return { ok: false, status: 400, reason: 'no code in the answer' };
    return { ok: true, code, verifier: attempt.verifier };
  }

  #forgetExpired(now: number): void {
    for (const [state, a] of this.#attempts) if (a.expiresAt < now) this.#attempts.delete(state);
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
