/**
 * /oidc/userinfo: the access token's sign-in, while it stands (standing.ts), as `{sub, act, name}`
 * plus `email` / `phone_number` when the sign-in's scopes and the grant release them now (and the
 * value is verified now: `email_verified` says which, scopes.ts). A
 * DPoP-bound token (`cnf.jkt`) is accepted only as `Authorization: DPoP <token>` with a proof of that
 * key (RFC 9449 §7); a Bearer token only as Bearer.
 */
import { verifyAccessToken } from '../../crypto/oidc-access-token.ts';
import { type OidcDeps, TOKEN_LIMITS } from './deps.ts';
import { checkDpopProof } from './dpop.ts';
import { OAuthError, invalidToken } from './oauth-error.ts';
import { signInBasis } from './standing.ts';
import { type Identity, identityOf, userinfoClaims } from './tokens.ts';

export interface UserinfoRequest {
  authorization: string | undefined;
  dpop: string | undefined;
  method: 'GET' | 'POST';
}

const dpopRefused = (why: string) => new OAuthError('invalid_dpop_proof', `the DPoP proof ${why}`, 401, { 'www-authenticate': `DPoP error="invalid_dpop_proof", algs="ES256"` });

export async function userinfo(d: OidcDeps, req: UserinfoRequest): Promise<Omit<Identity, 'scopes'>> {
  const m = /^(Bearer|DPoP) ([A-Za-z0-9._~+/-]+=*)$/i.exec(req.authorization?.trim() ?? '');
  if (!m?.[1] || !m[2]) throw invalidToken('send the access token as Authorization: Bearer <token> (or DPoP <token> with a DPoP proof)');
  const scheme = m[1].toLowerCase();
  const token = m[2];
  const now = d.clock.now();
  const claims = await verifyAccessToken(d.keys, token, d.issuer, now);
  if (!claims || typeof claims.sid !== 'string') throw invalidToken('the access token is invalid or expired');
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  const jkt = typeof cnf?.jkt === 'string' ? cnf.jkt : null;
  if (jkt !== null) {
    if (scheme !== 'dpop') throw invalidToken('this access token is DPoP-bound: send it as Authorization: DPoP <token> with a DPoP proof');
    if (req.dpop === undefined) throw dpopRefused('is missing (send header DPoP)');
    await checkDpopProof(d, req.dpop, { method: req.method, url: `${d.issuer}/oidc/userinfo`, accessToken: token, jkt }, dpopRefused);
  } else if (scheme !== 'bearer') {
    throw invalidToken('this access token is not DPoP-bound: send it as Authorization: Bearer <token>');
  }
  await d.limiter.check(`oidc-userinfo:${claims.sid}`, TOKEN_LIMITS.userinfoPerSignInPerMinute, 60);
  const signIn = await d.store.oidcSignIns.bySid(claims.sid);
  if (!signIn || claims.client_id !== signIn.clientId) throw invalidToken('the sign-in has ended');
  const basis = await signInBasis(d, signIn, now);
  const who = basis ? await identityOf(d, signIn, basis) : undefined;
  if (!who || who.sub !== claims.sub) throw invalidToken('the sign-in has ended');
  return userinfoClaims(who);
}
