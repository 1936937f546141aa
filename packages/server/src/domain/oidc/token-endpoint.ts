/**
 * POST /oidc/token (decisions §18), in named steps: authenticate the client, then per grant type
 * check the proof and act. `authorization_code`: open the code, check client, redirect URI and PKCE,
 * consume it (single use; a replay ends the sign-in the first redemption created), create the
 * sign-in. `refresh_token`: rotation by compare-and-set; a rotated token presented again ends the
 * sign-in. A sign-in whose grant was revoked or whose agent was removed is over.
 */
import { createHash } from 'node:crypto';
import type { OidcClientRecord, OidcSignInRecord } from '../../store/ports.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { isGrantLive } from '../grants/usable.ts';
import { authenticateTokenClient } from './client-auth.ts';
import { CODE_NAMESPACE, openCode, sidOfCode } from './codes.ts';
import { type OidcDeps, SIGN_IN_LIFETIME_MS } from './deps.ts';
import { invalidGrant, invalidRequest, unsupportedGrantType } from './oauth-error.ts';
import { type TokenResponse, hashRefreshToken, identityOf, issueTokens, newRefreshToken, sidOfRefreshToken } from './tokens.ts';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export async function tokenEndpoint(d: OidcDeps, authorization: string | undefined, form: Map<string, string>, repeated: string[]): Promise<TokenResponse> {
  if (repeated.length > 0) throw invalidRequest(`parameters sent more than once: ${repeated.join(', ')}`);
  const client = await authenticateTokenClient(d, authorization, form);
  const type = form.get('grant_type');
  if (type === 'authorization_code') return redeemCode(d, client, form);
  if (type === 'refresh_token') return refresh(d, client, form);
  if (type === undefined) throw invalidRequest('grant_type is missing');
  throw unsupportedGrantType('grant_type must be authorization_code or refresh_token');
}

/** Whether the sign-in may still be renewed: not ended, not expired, agent kept, grant live. */
async function standing(d: OidcDeps, s: OidcSignInRecord, now: number): Promise<boolean> {
  if (s.endedAt !== null || s.expiresAt <= now) return false;
  const [agent, grant] = await Promise.all([d.store.agents.byId(s.agentId), d.store.grants.byId(s.grantId)]);
  return agent !== undefined && !isAgentBlocked(agent) && grant !== undefined && isGrantLive(grant, now);
}

async function redeemCode(d: OidcDeps, client: OidcClientRecord, form: Map<string, string>): Promise<TokenResponse> {
  const raw = form.get('code');
  if (raw === undefined || raw === '') throw invalidRequest('code is missing');
  const code = openCode(d.secret, raw);
  const now = d.clock.now();
  if (!code || code.expiresAt <= now) throw invalidGrant('the code is invalid or expired');
  if (code.clientId !== client.id) throw invalidGrant('the code was issued to another client');
  if (form.get('redirect_uri') !== code.redirectUri) throw invalidGrant('redirect_uri must be the one of the authorization request');
  const verifier = form.get('code_verifier');
  if (verifier === undefined || !VERIFIER.test(verifier)) throw invalidGrant('code_verifier is missing or malformed (PKCE is required)');
  if (createHash('sha256').update(verifier, 'ascii').digest('base64url') !== code.codeChallenge) throw invalidGrant('code_verifier does not match the code_challenge');
  const sid = sidOfCode(d.secret, code.jti);
  if (!(await d.store.singleUse.consume(CODE_NAMESPACE, code.jti, code.expiresAt + 60_000, now))) {
    // A replayed code: whatever the first redemption issued ends too (RFC 6749 §4.1.2).
    await d.store.oidcSignIns.end(sid, now);
    throw invalidGrant('the code was used already');
  }
  const refreshToken = newRefreshToken(sid);
  const signIn: OidcSignInRecord = {
    sid, clientId: client.id, userId: code.userId, agentId: code.agentId, grantId: code.grantId, site: code.site,
    scopes: code.scopes, amr: code.amr, authTime: code.authTime, refreshHash: hashRefreshToken(refreshToken),
    createdAt: now, expiresAt: now + SIGN_IN_LIFETIME_MS, endedAt: null,
  };
  if (!(await standing(d, signIn, now))) throw invalidGrant('the access behind this code was revoked');
  const who = await identityOf(d, signIn);
  if (!who) throw invalidGrant('the agent or its owner is gone');
  if (!(await d.store.oidcSignIns.create(signIn))) throw invalidGrant('the code was used already');
  return issueTokens(d, signIn, who, refreshToken, code.nonce);
}

async function refresh(d: OidcDeps, client: OidcClientRecord, form: Map<string, string>): Promise<TokenResponse> {
  const token = form.get('refresh_token');
  if (token === undefined || token === '') throw invalidRequest('refresh_token is missing');
  const sid = sidOfRefreshToken(token);
  const signIn = sid === undefined ? undefined : await d.store.oidcSignIns.bySid(sid);
  // Another client's token is refused and left untouched.
  if (!signIn || signIn.clientId !== client.id) throw invalidGrant('the refresh token is invalid');
  const now = d.clock.now();
  const hash = hashRefreshToken(token);
  if (signIn.refreshHash !== hash) {
    // A rotated token came back: someone kept a copy. The whole sign-in ends.
    await d.store.oidcSignIns.end(signIn.sid, now);
    throw invalidGrant('the refresh token was used already; the sign-in has ended');
  }
  if (!(await standing(d, signIn, now))) {
    await d.store.oidcSignIns.end(signIn.sid, now);
    throw invalidGrant('the sign-in has ended (expired, access revoked, or agent removed)');
  }
  const next = newRefreshToken(signIn.sid);
  const rotated = await d.store.oidcSignIns.rotate(signIn.sid, hash, hashRefreshToken(next), now);
  if (!rotated) {
    await d.store.oidcSignIns.end(signIn.sid, now);
    throw invalidGrant('the refresh token was used already; the sign-in has ended');
  }
  const who = await identityOf(d, rotated);
  if (!who) throw invalidGrant('the agent or its owner is gone');
  return issueTokens(d, rotated, who, next, null);
}
