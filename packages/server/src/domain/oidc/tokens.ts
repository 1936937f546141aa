/**
 * What a sign-in is given at the token endpoint (decisions §18): an ID token (ES256, `iss` = base
 * URL, `aud` = client, 10 min, pairwise `sub` and `act.sub`, `amr`, `auth_time`, `sid`, `nonce`
 * only when one was sent, `email`/`phone_number` only with that scope, the owner's approval and a
 * verified value, `email_verified` with the `email` scope), an
 * access token (JWT `typ at+jwt`, 10 min, `cnf.jkt` when DPoP-bound) and a refresh token
 * (`<sid>.<secret>`; only its SHA-256 is stored).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AgentRecord, GrantRecord, OidcSignInRecord, UserRecord } from '../../store/ports/index.ts';
import { seconds } from '../../clock.ts';
import { ACCESS_TOKEN_LIFETIME_SEC, ID_TOKEN_LIFETIME_SEC, type OidcDeps } from './deps.ts';
import { allowedScopes, scopeClaims } from './scopes.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token: string;
  /** Always for an OIDC sign-in; for a resource sign-in only when `openid` is among its scopes. */
  id_token?: string;
  scope: string;
}

export const hashRefreshToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const newRefreshToken = (sid: string): string => `${sid}.${randomBytes(32).toString('base64url')}`;

/** The sid a refresh token names, or undefined for anything not shaped like one. */
export function sidOfRefreshToken(token: string): string | undefined {
  const m = /^([A-Za-z0-9_-]{16,64})\.[A-Za-z0-9_-]{43}$/.exec(token);
  return m?.[1];
}

/** The person and agent as this sign-in's site knows them. */
export interface Identity {
  sub: string;
  act: { sub: string; name: string };
  name: string;
  email?: string;
  email_verified?: boolean;
  phone_number?: string;
  phone_number_verified?: true;
  /** The scopes the grant allows now (possibly fewer than the sign-in started with). */
  scopes: string[];
}

/** The person and agent as this sign-in's site knows them, with what the grant releases now (`basis`: standing.ts). */
export async function identityOf(d: OidcDeps, signIn: Pick<OidcSignInRecord, 'site' | 'userId' | 'agentId' | 'scopes'>, basis: { agent: AgentRecord; grant: Pick<GrantRecord, 'scopes' | 'userInfo'> }): Promise<Identity | undefined> {
  const owner = await d.store.users.byId(signIn.userId);
  return owner && identityWith(d, signIn, basis, owner);
}

/** identityOf with the owner already read. */
export function identityWith(d: Pick<OidcDeps, 'secret'>, signIn: Pick<OidcSignInRecord, 'site' | 'userId' | 'agentId' | 'scopes'>, basis: { agent: AgentRecord; grant: Pick<GrantRecord, 'scopes' | 'userInfo'> }, owner: UserRecord): Identity {
  const { agent, grant } = basis;
  const scopes = allowedScopes(signIn.scopes, grant);
  return {
    sub: d.secret.pairwise(signIn.site, signIn.userId),
    act: { sub: d.secret.pairwise(signIn.site, signIn.agentId), name: agent.name },
    name: `${agent.name} (agent of ${owner.displayName || 'its owner'})`,
    ...scopeClaims(scopes, owner),
    scopes,
  };
}

/** The claims of userinfo: the identity without the bookkeeping. */
export const userinfoClaims = ({ scopes: _scopes, ...claims }: Identity): Omit<Identity, 'scopes'> => claims;

/** The claims of an ID token issued at `iat` (seconds) to the sign-in's client. */
export function idTokenClaims(d: Pick<OidcDeps, 'issuer'>, signIn: OidcSignInRecord, who: Identity, nonce: string | null, iat: number): Record<string, unknown> {
  return {
    iss: d.issuer, aud: signIn.clientId, iat, exp: iat + ID_TOKEN_LIFETIME_SEC,
    auth_time: signIn.authTime, amr: signIn.amr, sid: signIn.sid, ...userinfoClaims(who),
    ...(nonce !== null ? { nonce } : {}),
  };
}

/** `jkt`: the DPoP key the access token is bound to (the sign-in's, or this request's proof), or null. */
export async function issueTokens(d: OidcDeps, signIn: OidcSignInRecord, who: Identity, refreshToken: string, nonce: string | null, jkt: string | null): Promise<TokenResponse> {
  const iat = seconds(d.clock.now());
  const sign = await d.keys.signer();
  const scope = who.scopes.join(' ');
  const idToken = await sign(idTokenClaims(d, signIn, who, nonce, iat), 'JWT');
  const accessToken = await sign({
    iss: d.issuer, aud: d.issuer, sub: who.sub, client_id: signIn.clientId, scope,
    sid: signIn.sid, act: { sub: who.act.sub }, iat, exp: iat + ACCESS_TOKEN_LIFETIME_SEC, jti: randomBytes(16).toString('base64url'),
    ...(jkt !== null ? { cnf: { jkt } } : {}),
  }, 'at+jwt');
  return { access_token: accessToken, token_type: jkt !== null ? 'DPoP' : 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_SEC, refresh_token: refreshToken, id_token: idToken, scope };
}
