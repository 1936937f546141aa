/**
 * An OpenID Provider on 127.0.0.1 for tests: oidc-provider 8 (panva) with discovery, the code flow,
 * PKCE (S256 required), RS256 ID tokens with `auth_time`, one confidential client
 * (`client_secret_post`). Nobody types at its login page: the test says beforehand who signs in
 * (`signInAs(sub)`), or that the person refuses (`refuse()`, answered `error=access_denied`), and
 * the interaction is finished over plain HTTP when the browser (or the test's redirect walker)
 * reaches `/interaction/{uid}`. Every authorization request is checked the way Google's would be
 * (client, exact redirect URI, S256 challenge, state, nonce) and kept in `authorizations` for the
 * test to read; a check that fails is answered 400 and kept in `rejections`.
 * Test code only: never imported by src/.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type JWK } from 'oidc-provider';

export interface SignInAnswer {
  sub: string;
  email?: string;
  /** How long ago the person signed in at this provider (auth_time), in seconds; 0 by default. */
  signedInAgoSec?: number;
}

export interface IdentityProviderStandIn {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The query of every authorization request that passed the checks, in order. */
  readonly authorizations: URLSearchParams[];
  /** Why requests were refused by the stand-in's own checks. */
  readonly rejections: string[];
  /** Who signs in at the next interactions (until told otherwise). */
  signInAs(answer: SignInAnswer): void;
  /** The next interactions end with error=access_denied. */
  refuse(): void;
  /** The next authorization's ID token carries another nonce than the one asked for (a mix-up or injected code). */
  swapNextNonce(): void;
  /** The redirect URIs the client may use, when they were not known at start (the service's port). */
  allowRedirectUris(uris: string[]): void;
  /** Settings for OAUTH_<NAME>_* of the service under test. */
  env(name: string, label?: string): Record<string, string>;
  stop(): Promise<void>;
}

export async function startIdentityProviderStandIn(opts: { redirectUris?: string[]; clientId?: string; clientSecret?: string } = {}): Promise<IdentityProviderStandIn> {
  let redirectUris = opts.redirectUris ?? [];
  const clientId = opts.clientId ?? `client-${Math.random().toString(36).slice(2, 10)}`;
  const clientSecret = opts.clientSecret ?? `secret-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const authorizations: URLSearchParams[] = [];
  const rejections: string[] = [];
  const emails = new Map<string, string>();
  let answer: SignInAnswer | 'deny' | null = null;
  let swapNonce = false;

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

  const build = () => new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    }],
    jwks: { keys: [{ ...jwk, kid: 'stand-in-rs256', alg: 'RS256', use: 'sig' } as JWK] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // Every ID token carries the claims of its scopes (as Google's do), not only userinfo.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...(emails.has(sub) ? { email: emails.get(sub), email_verified: true } : {}) }) }),
    pkce: { required: () => true, methods: ['S256'] },
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['identity-provider-stand-in-not-a-secret'] },
    ttl: { IdToken: 600, AccessToken: 600, Session: 3600, Interaction: 600, Grant: 3600 },
  });
  let provider = build();
  let handle = provider.callback();
  // oidc-provider's own errors go to the test's output: a 500 here is a bug of the test, not of Mandate.
  const watch = (p: Provider) => p.on('server_error', (_ctx, err) => console.error('identity provider stand-in server_error', err));
  watch(provider);

  /** Google refuses these before anything else; so does the stand-in. */
  function checkAuthorization(q: URLSearchParams): string | null {
    if (q.get('client_id') !== clientId) return `unknown client_id ${q.get('client_id')}`;
    if (!redirectUris.includes(q.get('redirect_uri') ?? '')) return `redirect_uri not registered: ${q.get('redirect_uri')}`;
    if (q.get('response_type') !== 'code') return 'response_type must be code';
    if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '')) return 'PKCE S256 challenge missing';
    if (!q.get('state') || (q.get('state') ?? '').length < 32) return 'state missing or short';
    if (!q.get('nonce') || (q.get('nonce') ?? '').length < 32) return 'nonce missing or short';
    if (!(q.get('scope') ?? '').split(' ').includes('openid')) return 'scope must include openid';
    return null;
  }

  async function finishInteraction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const now = Math.floor(Date.now() / 1000);
    if (answer === null) {
      res.writeHead(409, { 'content-type': 'text/plain' }).end('the test did not say who signs in (signInAs or refuse)');
      return;
    }
    if (answer === 'deny') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the person refused' }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = answer.sub;
    if (answer.email) emails.set(accountId, answer.email);
    const clientIdOf = String(details.params.client_id);
    const grant = details.grantId ? (await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId: clientIdOf }) : new provider.Grant({ accountId, clientId: clientIdOf });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, {
      login: { accountId, ts: now - (answer.signedInAgoSec ?? 0) },
      consent: { grantId },
    }, { mergeWithLastSubmission: false });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/auth') {
      const problem = checkAuthorization(url.searchParams);
      if (problem) {
        rejections.push(problem);
        res.writeHead(400, { 'content-type': 'text/plain' }).end(problem);
        return;
      }
      authorizations.push(new URLSearchParams(url.searchParams));
      if (swapNonce) {
        swapNonce = false;
        url.searchParams.set('nonce', `swapped-${url.searchParams.get('nonce')}`);
        req.url = `${url.pathname}${url.search}`;
      }
    }
    if (/^\/interaction\/[A-Za-z0-9_-]+$/.test(url.pathname)) {
      finishInteraction(req, res).catch((e: unknown) => {
        rejections.push(`interaction: ${e instanceof Error ? e.message : String(e)}`);
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e));
      });
      return;
    }
    void handle(req, res);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    authorizations,
    rejections,
    signInAs: (a) => void (answer = a),
    refuse: () => void (answer = 'deny'),
    swapNextNonce: () => void (swapNonce = true),
    allowRedirectUris: (uris) => {
      redirectUris = uris;
      provider = build();
      watch(provider);
      handle = provider.callback();
    },
    env: (name, label) => ({
      [`OAUTH_${name.toUpperCase()}_ISSUER`]: issuer,
      [`OAUTH_${name.toUpperCase()}_CLIENT_ID`]: clientId,
      [`OAUTH_${name.toUpperCase()}_CLIENT_SECRET`]: clientSecret,
      ...(label ? { [`OAUTH_${name.toUpperCase()}_LABEL`]: label } : {}),
    }),
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
