import type { OAuthProviderConfig } from '../../config/oauth-providers.ts';

/** What an identity provider's answer proved, after openid-client checked the ID token. */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  /** `auth_time` (epoch seconds) when the issuer sent it. */
  authTime: number | null;
  /** Shown to the owner only (which account was linked); never used to find or make an account. */
  email: string | null;
}

/**
 * The relying-party side of an identity provider's code flow (outbound/openid-issuers.ts implements
 * it with openid-client): discovery, PKCE S256, `state` and `nonce` checks, the ID token's issuer,
 * audience and signature. A port, so the domain rules can be tested without HTTP.
 */
export interface IssuerPort {
  /** The issuer's authorization URL for this flow. `freshLogin`: `max_age=0` and `prompt=login`. */
  authorizationUrl(provider: OAuthProviderConfig, flow: { state: string; nonce: string; codeVerifier: string; freshLogin: boolean }): Promise<string>;
  /**
   * Exchanges the code of `callbackUrl` (the callback as received) and checks the ID token; throws
   * when anything does not match. `maxAgeSec`: `auth_time` is required and must be that recent.
   */
  finish(provider: OAuthProviderConfig, callbackUrl: URL, flow: { state: string; nonce: string; codeVerifier: string; maxAgeSec: number | null }): Promise<VerifiedIdentity>;
}

/** `<BASE_URL>/api/oauth/<name>/callback`: what the operator registers at the issuer. */
export const redirectUriOf = (baseUrl: string, provider: string): string => `${baseUrl}/api/oauth/${provider}/callback`;
