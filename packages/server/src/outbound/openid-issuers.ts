import * as oidc from 'openid-client';
import type { OAuthProviderConfig } from '../config/oauth-providers.ts';
import { type IssuerPort, type VerifiedIdentity, redirectUriOf } from '../domain/identity-providers/issuer-port.ts';

/** Seconds each call to an issuer may take (discovery, token, JWKS): the outbound guard's budget (§24). */
const TIMEOUT_SEC = 5;

/**
 * The identity providers' code flow through openid-client v6 (decisions §15).
 *
 * Not through the outbound guard (guarded-fetch.ts, decisions §24), on purpose: the guard is for
 * addresses that someone else chose (a site's verification file, a push endpoint). An issuer is
 * chosen by the operator in the configuration, like SMTP_URL, and may rightly live on the
 * operator's own private network (a Keycloak or Authentik beside the service), which the guard would
 * refuse. What the guard would add is kept here: https only (an http: issuer is accepted by the
 * configuration only with OUTBOUND_ALLOW_LOOPBACK, and only then is openid-client's
 * allowInsecureRequests used), and a 5-second timeout per call. openid-client does not follow
 * redirects on the token endpoint and checks the issuer of the discovery document.
 */
export class OpenIdIssuers implements IssuerPort {
  private readonly configs = new Map<string, Promise<oidc.Configuration>>();

  constructor(private readonly baseUrl: string) {}

  async authorizationUrl(provider: OAuthProviderConfig, flow: { state: string; nonce: string; codeVerifier: string; freshLogin: boolean }): Promise<string> {
    const config = await this.config(provider);
    const params: Record<string, string> = {
      redirect_uri: redirectUriOf(this.baseUrl, provider.name),
      scope: 'openid email',
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
    };
    // An approval needs the owner to sign in again now, not a session the issuer kept.
    if (flow.freshLogin) Object.assign(params, { max_age: '0', prompt: 'login' });
    return oidc.buildAuthorizationUrl(config, params).href;
  }

  async finish(provider: OAuthProviderConfig, callbackUrl: URL, flow: { state: string; nonce: string; codeVerifier: string; maxAgeSec: number | null }): Promise<VerifiedIdentity> {
    const config = await this.config(provider);
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: flow.codeVerifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
      ...(flow.maxAgeSec === null ? {} : { maxAge: flow.maxAgeSec }),
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('the issuer sent no ID token');
    return {
      issuer: claims.iss,
      subject: claims.sub,
      authTime: typeof claims.auth_time === 'number' ? claims.auth_time : null,
      email: typeof claims.email === 'string' ? claims.email : null,
    };
  }

  /** Discovery once per provider; a failed one is forgotten, so the next flow tries again. */
  private config(provider: OAuthProviderConfig): Promise<oidc.Configuration> {
    let config = this.configs.get(provider.name);
    if (!config) {
      const insecure = new URL(provider.issuer).protocol === 'http:';
      config = oidc.discovery(new URL(provider.issuer), provider.clientId, { redirect_uris: [redirectUriOf(this.baseUrl, provider.name)] }, oidc.ClientSecretPost(provider.clientSecret), {
        timeout: TIMEOUT_SEC,
        // Only ever for an http: issuer, which the configuration accepts only with OUTBOUND_ALLOW_LOOPBACK.
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      }).then((c) => {
        c.timeout = TIMEOUT_SEC;
        return c;
      });
      config.catch(() => this.configs.delete(provider.name));
      this.configs.set(provider.name, config);
    }
    return config;
  }
}
