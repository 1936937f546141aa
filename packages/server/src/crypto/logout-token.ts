/**
 * The OpenID Connect Back-Channel Logout 1.0 `logout_token` (§2.4; decisions §12 and §18): a JWT
 * signed with the service's current key, typed `logout+jwt` (§2.4 recommends the explicit type so a
 * logout token can never be taken for an ID token), carrying the logout event and never a `nonce`.
 */
import type { SigningKeys } from './signing-keys.ts';
import { randomToken } from './random.ts';

export const LOGOUT_TOKEN_TYP = 'logout+jwt';
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Decisions §18: two minutes, enough for one delivery; each retry signs a fresh token. */
export const LOGOUT_TOKEN_LIFETIME_SEC = 120;

export interface LogoutTokenClaims {
  /** The service's base URL. */
  iss: string;
  /** The client id the token is for. */
  aud: string;
  /** The person, as this client knows them (pairwise). */
  sub: string;
  /** The sign-in session being ended, as the ID token named it. */
  sid: string;
  /** Epoch milliseconds of the send (the injected clock), not of the queueing. */
  now: number;
}

/** Signs one logout token; every call has its own random `jti`, so an RP can refuse replays. */
export function signLogoutToken(keys: SigningKeys, claims: LogoutTokenClaims): Promise<string> {
  const iat = Math.floor(claims.now / 1000);
  return keys.sign(
    {
      iss: claims.iss,
      aud: claims.aud,
      iat,
      exp: iat + LOGOUT_TOKEN_LIFETIME_SEC,
      jti: randomToken(16),
      sub: claims.sub,
      sid: claims.sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    },
    LOGOUT_TOKEN_TYP,
  );
}
