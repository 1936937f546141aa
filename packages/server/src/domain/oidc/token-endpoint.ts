/**
 * POST /oidc/token (decisions §18), in named steps: authenticate the client, check a DPoP proof when
 * one is sent, then per grant type check the proof of the grant and act.
 * - `authorization_code`: open the code, check client, redirect URI, PKCE, `dpop_jkt` and `resource`,
 *   consume it (single use; a replay ends the sign-in the first redemption created), create the sign-in.
 * - `refresh_token`: rotation by compare-and-set; a rotated token presented again ends the sign-in.
 * A code a person's browser got for a protected resource (decisions §28) starts a sign-in that keeps
 * that resource: its access tokens are resource passes (resource-tokens.ts), and a `resource`
 * parameter sent at the token endpoint must name it exactly (RFC 8707: else `invalid_target`).
 * - CIBA (ciba.ts): the owner's answer to a backchannel request, polled.
 * A sign-in whose grant was revoked or whose agent was removed is over. Every end of a sign-in here
 * goes through the one hook that tells the client (sign-in-end.ts).
 */
import { CODE_VERIFIER, s256Matches } from '../../crypto/pkce.ts';
import type { KnownClient } from './known-client.ts';
import { authenticateTokenClient } from './client-auth.ts';
import { CIBA_GRANT_TYPE, redeemCiba } from './ciba.ts';
import { CODE_NAMESPACE, openCode, sidOfCode } from './codes.ts';
import { type OidcDeps, TOKEN_LIMITS } from './deps.ts';
import { rateLimited } from '../errors.ts';
import { checkDpopProof } from './dpop.ts';
import { invalidGrant, invalidRequest, invalidTarget, unsupportedGrantType } from './oauth-error.ts';
import { PassRefused, isResourceSignIn, issueResourceTokens } from './resource-tokens.ts';
import { endSignIn } from './sign-in-end.ts';
import { startSignIn } from './sign-in-start.ts';
import { signInBasis } from './standing.ts';
import { type TokenResponse, hashRefreshToken, identityWith, issueTokens, newRefreshToken, sidOfRefreshToken } from './tokens.ts';
import type { OidcSignInRecord } from '../../store/ports/index.ts';

const REFRESH_LIMIT = { max: TOKEN_LIMITS.refreshesPerMinute, windowMs: 60_000 };

/** One request to the token endpoint, as the route read it. */
export interface TokenRequest {
  authorization: string | undefined;
  form: Map<string, string>;
  /** Names of parameters sent more than once. */
  repeated: string[];
  /** The `DPoP` header, when sent. */
  dpop: string | undefined;
}

export async function tokenEndpoint(d: OidcDeps, req: TokenRequest): Promise<TokenResponse> {
  if (req.repeated.length > 0) throw invalidRequest(`parameters sent more than once: ${req.repeated.join(', ')}`);
  const type = req.form.get('grant_type');
  // A refresh's sign-in is read while the client is authenticated (one round trip less); nothing
  // of it is looked at, or answered, before the client is.
  const signIn = type === 'refresh_token' ? signInOfToken(d, req.form.get('refresh_token')) : undefined;
  signIn?.catch(() => {});
  const client = await authenticateTokenClient(d, req.authorization, req.form);
  const supported = ['authorization_code', 'refresh_token', CIBA_GRANT_TYPE];
  if (type === undefined) throw invalidRequest('grant_type is missing');
  if (!supported.includes(type)) throw unsupportedGrantType(`grant_type must be one of ${supported.join(', ')}`);
  const jkt = req.dpop === undefined ? null : await checkDpopProof(d, req.dpop, { method: 'POST', url: `${d.issuer}/oidc/token` });
  if (type === 'authorization_code') return redeemCode(d, client, req.form, jkt);
  if (type === 'refresh_token') return refresh(d, client, req.form, jkt, await signIn);
  return redeemCiba(d, client, req.form, jkt);
}

/** Ends a sign-in found broken, tells its client, and wakes the sender. */
async function endBroken(d: OidcDeps, sid: string): Promise<void> {
  if (await endSignIn(d.store, d.secret, sid, d.clock.now())) d.notifier.wake();
}

async function redeemCode(d: OidcDeps, client: KnownClient, form: Map<string, string>, jkt: string | null): Promise<TokenResponse> {
  const raw = form.get('code');
  if (raw === undefined || raw === '') throw invalidRequest('code is missing');
  const code = openCode(d.secret, raw);
  const now = d.clock.now();
  if (!code || code.expiresAt <= now) throw invalidGrant('the code is invalid or expired');
  if (code.clientId !== client.id) throw invalidGrant('the code was issued to another client');
  if (form.get('redirect_uri') !== code.redirectUri) throw invalidGrant('redirect_uri must be the one of the authorization request');
  const verifier = form.get('code_verifier');
  if (verifier === undefined || !CODE_VERIFIER.test(verifier)) throw invalidGrant('code_verifier is missing or malformed (PKCE is required)');
  if (!s256Matches(verifier, code.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge');
  if (code.dpopJkt !== null && jkt !== code.dpopJkt) throw invalidGrant('the code is bound to a DPoP key (dpop_jkt): send a DPoP proof signed by that key');
  checkResource(form, code.resource);
  const sid = sidOfCode(d.secret, code.jti);
  if (!(await d.store.singleUse.consume(CODE_NAMESPACE, code.jti, code.expiresAt + 60_000, now))) {
    // A replayed code: whatever the first redemption issued ends too (RFC 6749 §4.1.2).
    await endBroken(d, sid);
    throw invalidGrant('the code was used already');
  }
  return startSignIn(d, {
    sid, clientId: client.id, userId: code.userId, agentId: code.agentId, grantId: code.grantId, site: code.site,
    scopes: code.scopes, amr: code.amr, authTime: code.authTime, dpopJkt: jkt, resource: code.resource,
  }, code.nonce, 'the code was used already');
}

/** The sign-in a refresh token names (undefined for a token not shaped like one). */
async function signInOfToken(d: OidcDeps, token: string | undefined): Promise<OidcSignInRecord | undefined> {
  const sid = token === undefined ? undefined : sidOfRefreshToken(token);
  return sid === undefined ? undefined : d.store.oidcSignIns.bySid(sid);
}

async function refresh(d: OidcDeps, client: KnownClient, form: Map<string, string>, jkt: string | null, signIn: OidcSignInRecord | undefined): Promise<TokenResponse> {
  const token = form.get('refresh_token');
  if (token === undefined || token === '') throw invalidRequest('refresh_token is missing');
  // Another client's token is refused and left untouched.
  if (!signIn || signIn.clientId !== client.id) throw invalidGrant('the refresh token is invalid');
  const now = d.clock.now();
  const hash = hashRefreshToken(token);
  if (signIn.refreshHash !== hash) {
    // A rotated token came back: someone kept a copy. The whole sign-in ends.
    await endBroken(d, signIn.sid);
    throw invalidGrant('the refresh token was used already; the sign-in has ended');
  }
  if (signIn.dpopJkt !== null && jkt !== signIn.dpopJkt) throw invalidGrant('this sign-in is bound to a DPoP key: send a DPoP proof signed by that key');
  checkResource(form, signIn.resource);
  // The owner is read with the agent and grant (the ID token names them); a resource pass does not.
  const [basis, owner] = await Promise.all([signInBasis(d, signIn, now), signIn.resource === null ? d.store.users.byId(signIn.userId) : undefined]);
  if (!basis) {
    await endBroken(d, signIn.sid);
    throw invalidGrant('the sign-in has ended (expired, access revoked, or agent removed)');
  }
  if (signIn.resource === null && !owner) throw invalidGrant('the agent or its owner is gone');
  const next = newRefreshToken(signIn.sid);
  const rotated = await d.store.oidcSignIns.rotate(signIn.sid, hash, hashRefreshToken(next), now, REFRESH_LIMIT);
  if (!rotated) {
    // Either over the limit (the token stays good) or a concurrent use won: only the latter ends it.
    const until = await d.store.oidcSignIns.refreshLimitedUntil(signIn.sid, now, REFRESH_LIMIT);
    if (until !== undefined) throw rateLimited((until - now) / 1000);
    await endBroken(d, signIn.sid);
    throw invalidGrant('the refresh token was used already; the sign-in has ended');
  }
  if (isResourceSignIn(rotated)) {
    try {
      return await issueResourceTokens(d, { signIn: rotated, basis, refreshToken: next, nonce: null, refreshed: true });
    } catch (e) {
      if (!(e instanceof PassRefused)) throw e;
      // The grant expired, ran out of uses or was revoked since the basis was read: nothing more can
      // come of this sign-in.
      await endBroken(d, signIn.sid);
      throw invalidGrant(e.message);
    }
  }
  if (!owner) throw new Error('a sign-in without a resource was rotated without its owner');
  return issueTokens(d, rotated, identityWith(d, rotated, basis, owner), next, null, rotated.dpopJkt ?? jkt);
}

/**
 * RFC 8707 at the token endpoint: a `resource` sent again must be exactly the one the code or
 * sign-in is for; one sent for a sign-in without a resource names nothing this grant covers.
 */
function checkResource(form: Map<string, string>, resource: string | null): void {
  const sent = form.get('resource');
  if (sent === undefined) return;
  if (resource === null) throw invalidTarget('this grant is not for a protected resource: send no resource parameter');
  if (sent !== resource) throw invalidTarget(`resource must be the one the authorization was for: ${resource}`);
}
