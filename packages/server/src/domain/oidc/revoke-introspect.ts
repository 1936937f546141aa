/**
 * RFC 7009 revocation and RFC 7662 introspection (decisions §18, interface "OIDC-style endpoints").
 * Revoke: a refresh or access token of a live sign-in of the authenticated client ends the whole
 * sign-in; anything else (unknown, another client's, already ended, failed client authentication)
 * changes nothing, and the answer is 200 either way. Introspect: for a confidential client; a token
 * not live, not ours or issued to another client is `{active: false}`.
 */
import { verifyAccessToken } from '../../crypto/oidc-access-token.ts';
import type { OidcSignInRecord } from '../../store/ports/index.ts';
import type { KnownClient } from './known-client.ts';
import { AppError } from '../errors.ts';
import { seconds } from '../../clock.ts';
import { authenticateTokenClient } from './client-auth.ts';
import { type OidcDeps, TOKEN_LIMITS } from './deps.ts';
import { invalidClient, invalidRequest } from './oauth-error.ts';
import { signInBasis } from './standing.ts';
import { hashRefreshToken, sidOfRefreshToken } from './tokens.ts';

interface Found {
  signIn: OidcSignInRecord;
  kind: 'access_token' | 'refresh_token';
  iat: number;
  exp: number;
  /** An access token's `cnf.jkt`, or a bound sign-in's key for its refresh token. */
  jkt: string | null;
}

/** The live sign-in of `client` a token belongs to, or undefined. */
async function find(d: OidcDeps, client: KnownClient, token: string): Promise<Found | undefined> {
  const now = d.clock.now();
  const sid = sidOfRefreshToken(token);
  let found: Found | undefined;
  if (sid !== undefined) {
    const s = await d.store.oidcSignIns.bySid(sid);
    if (s && s.refreshHash === hashRefreshToken(token)) found = { signIn: s, kind: 'refresh_token', iat: seconds(s.createdAt), exp: seconds(s.expiresAt), jkt: s.dpopJkt };
  } else {
    const claims = await verifyAccessToken(d.keys, token, d.issuer, now);
    const s = typeof claims?.sid === 'string' ? await d.store.oidcSignIns.bySid(claims.sid) : undefined;
    const cnf = claims?.cnf as { jkt?: unknown } | undefined;
    if (s && claims && claims.client_id === s.clientId && typeof claims.iat === 'number' && typeof claims.exp === 'number') found = { signIn: s, kind: 'access_token', iat: claims.iat, exp: claims.exp, jkt: typeof cnf?.jkt === 'string' ? cnf.jkt : null };
  }
  if (!found || found.signIn.clientId !== client.id) return undefined;
  return (await signInBasis(d, found.signIn, now)) ? found : undefined;
}

const tokenOf = (form: Map<string, string>): string => {
  const token = form.get('token');
  if (token === undefined || token === '' || token.length > 4096) throw invalidRequest('token is missing');
  return token;
};

export async function revoke(d: OidcDeps, authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<void> {
  let client: KnownClient;
  try {
    if (repeated.length > 0) return;
    client = await authenticateTokenClient(d, authorization, form);
  } catch (e) {
    if (e instanceof AppError && e.status < 500) return;
    throw e;
  }
  const token = form.get('token');
  if (token === undefined || token === '' || token.length > 4096) return;
  try {
    await d.limiter.check(`oidc-revoke:${client.id}`, TOKEN_LIMITS.revokePerClientPerMinute, 60);
  } catch {
    return;
  }
  const found = await find(d, client, token);
  if (found) await d.store.oidcSignIns.end(found.signIn.sid, d.clock.now());
}

export type Introspection = { active: false } | { active: true; sub: string; act: { sub: string }; scope: string; client_id: string; exp: number; iat: number; token_type: string; cnf?: { jkt: string } };

export async function introspect(d: OidcDeps, authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<Introspection> {
  if (repeated.length > 0) throw invalidRequest(`parameters sent more than once: ${repeated.join(', ')}`);
  const client = await authenticateTokenClient(d, authorization, form);
  if (client.isPublic) throw invalidClient('introspection is for confidential clients');
  await d.limiter.check(`oidc-introspect:${client.id}`, TOKEN_LIMITS.introspectPerClientPerMinute, 60);
  const found = await find(d, client, tokenOf(form));
  if (!found) return { active: false };
  const s = found.signIn;
  return {
    active: true,
    sub: d.secret.pairwise(s.site, s.userId),
    act: { sub: d.secret.pairwise(s.site, s.agentId) },
    scope: s.scopes.join(' '),
    client_id: s.clientId,
    exp: found.exp,
    iat: found.iat,
    token_type: found.kind,
    ...(found.jkt !== null ? { cnf: { jkt: found.jkt } } : {}),
  };
}
