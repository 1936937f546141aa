import type { OidcSignInRecord } from '../../store/ports/index.ts';
import { type OidcDeps, SIGN_IN_LIFETIME_MS } from './deps.ts';
import { invalidGrant } from './oauth-error.ts';
import { type SignInBasis, signInBasis } from './standing.ts';
import { type TokenResponse, hashRefreshToken, identityOf, issueTokens, newRefreshToken } from './tokens.ts';
import { PassRefused, type ResourceSignIn, isResourceSignIn, issueResourceTokens, refusedGrant } from './resource-tokens.ts';

/**
 * Creates a sign-in and answers its first tokens: used by the code and CIBA grants. The pairwise
 * subject the client is given for the agent is remembered for this client only, so CIBA's
 * `login_hint` from this client (and no other on the same host) can find it.
 */
export async function startSignIn(d: OidcDeps, signIn: Omit<OidcSignInRecord, 'refreshHash' | 'createdAt' | 'expiresAt' | 'endedAt'>, nonce: string | null, replayed: string): Promise<TokenResponse> {
  const now = d.clock.now();
  const refreshToken = newRefreshToken(signIn.sid);
  const record: OidcSignInRecord = { ...signIn, refreshHash: hashRefreshToken(refreshToken), createdAt: now, expiresAt: now + SIGN_IN_LIFETIME_MS, endedAt: null };
  const basis = await signInBasis(d, record, now);
  if (!basis) throw invalidGrant('the access behind this sign-in was revoked');
  if (isResourceSignIn(record)) return startResourceSignIn(d, record, basis, refreshToken, nonce, replayed);
  const who = await identityOf(d, record, basis);
  if (!who || !who.scopes.includes('openid')) throw invalidGrant('the agent or its owner is gone, or signing in is no longer allowed');
  if (!(await d.store.oidcSignIns.create(record))) throw invalidGrant(replayed);
  await d.store.oidcSubjects.remember(record.clientId, record.site, who.act.sub, record.agentId, now);
  return issueTokens(d, record, who, refreshToken, nonce, record.dpopJkt);
}

/**
 * A sign-in for a protected resource (decisions §28): its first pass spends a use of the grant, and
 * the sign-in is stored in between, so that no token exists for a sign-in that was not stored.
 */
async function startResourceSignIn(d: OidcDeps, record: ResourceSignIn, basis: SignInBasis, refreshToken: string, nonce: string | null, replayed: string): Promise<TokenResponse> {
  try {
    return await issueResourceTokens(d, {
      signIn: record, basis, refreshToken, nonce, refreshed: false,
      commit: async () => {
        if (!(await d.store.oidcSignIns.create(record))) throw invalidGrant(replayed);
      },
    });
  } catch (e) {
    if (e instanceof PassRefused) throw refusedGrant(e);
    throw e;
  }
}
