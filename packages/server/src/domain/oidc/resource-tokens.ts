/**
 * What a sign-in for a protected resource (decisions §28) is given at the token endpoint: a resource
 * pass as `access_token` (resource-pass-claims.ts), the rotating refresh token, and an ID token only
 * when `openid` is among the scopes the grant allows.
 *
 * Every pass counts as every pass issuance counts it (Store.commitPassIssuance): the rate counter,
 * one use of the grant spent (refused once none is left, or the grant has expired or was revoked)
 * and the `pass.issued` record, in one commit. The grant's own refresh hash is replaced by one of a
 * token nobody holds: an app has no key, so it never calls `/api/v1/token`; its refresh token is the
 * sign-in's.
 */
import { PASS_TYP } from '@mandate/protocol';
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { GrantRecord, OidcSignInRecord } from '../../store/ports/index.ts';
import { seconds } from '../../clock.ts';
import { rateLimited } from '../errors.ts';
import { TOKEN_RATE } from '../passes/issue-pass.ts';
import type { OidcDeps } from './deps.ts';
import { invalidGrant } from './oauth-error.ts';
import { resourcePassClaims } from './resource-pass-claims.ts';
import type { SignInBasis } from './standing.ts';
import { type TokenResponse, idTokenClaims, identityOf } from './tokens.ts';
import { allowedScopes } from './scopes.ts';

/** A sign-in for a resource: its `resource` is set. */
export type ResourceSignIn = OidcSignInRecord & { resource: string };

export const isResourceSignIn = (s: OidcSignInRecord): s is ResourceSignIn => s.resource !== null;

/** Why a grant gave no pass: said to the client as `invalid_grant`. */
const REFUSED = 'the access behind this sign-in has expired, has no uses left, or was revoked';

/** A pass the grant could not pay for: the caller ends the sign-in (its grant is spent or gone). */
export class PassRefused extends Error {}

export interface ResourceIssue {
  signIn: ResourceSignIn;
  basis: SignInBasis;
  refreshToken: string;
  nonce: string | null;
  /** True for a refresh (recorded in the `pass.issued` detail). */
  refreshed: boolean;
  /**
   * Runs after the use is spent and before anything is signed: creating the sign-in (the code grant),
   * so that a use is never spent on a sign-in that could not be created twice, and no token exists
   * for a sign-in that was not stored.
   */
  commit?: () => Promise<void>;
}

export async function issueResourceTokens(d: OidcDeps, i: ResourceIssue): Promise<TokenResponse> {
  const { signIn, basis } = i;
  const now = d.clock.now();
  const scopes = allowedScopes(signIn.scopes, basis.grant);
  // The key and the owner are made ready before the use is spent (as issue-pass.ts does).
  const sign = await d.keys.signer();
  const who = scopes.includes('openid') ? await identityOf(d, signIn, basis) : undefined;
  if (scopes.includes('openid') && !who) throw invalidGrant('the app or its owner is gone');
  const outcome = await d.store.commitPassIssuance({
    grantId: basis.grant.id,
    now,
    newRefreshHash: sha256Hex(randomToken()),
    rate: { key: `token:${basis.agent.id}:${signIn.resource}`, windowMs: TOKEN_RATE.windowSec * 1000, limit: TOKEN_RATE.limit },
    record: { detail: { grant: basis.grant.id, refreshed: i.refreshed, client_id: signIn.clientId, resource: signIn.resource }, ip: null, createdAt: now },
  });
  if (outcome.kind === 'limited') throw rateLimited((outcome.resetAt - now) / 1000);
  if (outcome.kind === 'refused') throw new PassRefused(REFUSED);
  await i.commit?.();
  const grant: GrantRecord = outcome.grant;
  const claims = resourcePassClaims({
    issuer: d.issuer, agentId: basis.agent.id, clientId: signIn.clientId, resource: signIn.resource, grant,
    scopes: allowedScopes(signIn.scopes, grant), now, jti: randomToken(16), revSeq: outcome.revSeq, jkt: signIn.dpopJkt,
  });
  const accessToken = await sign({ ...claims }, PASS_TYP);
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: signIn.dpopJkt !== null ? 'DPoP' : 'Bearer',
    expires_in: claims.exp - claims.iat,
    refresh_token: i.refreshToken,
    scope: claims.scope.join(' '),
  };
  if (who) {
    response.id_token = await sign(idTokenClaims(d, signIn, who, i.nonce, seconds(now)), 'JWT');
  }
  return response;
}

/** The spent or gone grant as the OAuth error the client reads. */
export const refusedGrant = (e: PassRefused) => invalidGrant(e.message);
