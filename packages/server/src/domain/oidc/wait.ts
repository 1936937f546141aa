/**
 * The wait address of an authorize call the owner must approve: `/oidc/authorize/wait/{txn}/status?k=`
 * answers `{status: "pending"}`, then `{redirect}` to the client with a code (approved) or with
 * `access_denied` (denied, expired, cancelled). `k` is the authorize call sealed under the OIDC
 * secret and bound to the txn: without it nothing is revealed (404). Every answer after approval
 * carries a code with the same id, so at most one of them can be redeemed.
 */
import { seconds } from '../../clock.ts';
import { notFound } from '../errors.ts';
import { isGrantLive } from '../grants/usable.ts';
import { looksLikeId } from '../ids.ts';
import { type PendingAuthorize, WAIT_LABEL, errorRedirect, redirectTo } from './authorize.ts';
import { CODE_LIFETIME_MS, type OidcDeps } from './deps.ts';
import { mintCode } from './codes.ts';
import { allowedScopes } from './scopes.ts';

export type WaitStatus = { status: 'pending'; expires_in: number } | { redirect: string };

function openPending(d: OidcDeps, txn: string, k: string): PendingAuthorize {
  if (!looksLikeId('t', txn)) throw notFound('not found');
  const v = d.secret.open(`${WAIT_LABEL}:${txn}`, k) as PendingAuthorize | undefined;
  if (!v || v.txn !== txn) throw notFound('not found');
  return v;
}

export async function waitStatus(d: OidcDeps, txn: string, k: string): Promise<WaitStatus> {
  const p = openPending(d, txn, k);
  const request = await d.store.authzRequests.byId(txn);
  if (!request || request.agentId !== p.agentId) throw notFound('not found');
  const now = d.clock.now();
  const denied = (why: string): WaitStatus => ({ redirect: errorRedirect(d.issuer, p.redirectUri, p.state, 'access_denied', why) });
  if (request.status === 'pending') {
    if (request.expiresAt > now) return { status: 'pending', expires_in: Math.ceil((request.expiresAt - now) / 1000) };
    return denied('the owner did not answer in time');
  }
  if (request.status !== 'approved' || request.grantId === null) return denied(request.status === 'denied' ? 'the owner declined this sign-in' : `the request is ${request.status}`);
  const decidedAt = request.decidedAt ?? request.createdAt;
  // The code of an approval is collected within the request's own lifetime after the decision.
  if (decidedAt + 300_000 <= now) return denied('the approval was not collected in time; start the sign-in again');
  const grant = await d.store.grants.byId(request.grantId);
  if (!grant || !isGrantLive(grant, now)) return denied('the access was revoked');
  // The owner may have narrowed the scopes or the email/phone; without openid there is no sign-in.
  const scopes = allowedScopes(p.scopes, grant);
  if (!scopes.includes('openid')) return denied('the owner did not approve "openid"');
  const code = mintCode(d.secret, {
    jti: `w.${txn}`, clientId: p.clientId, redirectUri: p.redirectUri, codeChallenge: p.codeChallenge, nonce: p.nonce,
    agentId: request.agentId, userId: request.userId, grantId: grant.id, site: grant.site, scopes,
    authTime: seconds(decidedAt), amr: ['agent', 'passkey'], expiresAt: Math.min(now + CODE_LIFETIME_MS, decidedAt + 300_000 + CODE_LIFETIME_MS),
    dpopJkt: p.dpopJkt ?? null, resource: null,
  });
  return { redirect: redirectTo(d.issuer, p.redirectUri, { code, state: p.state }) };
}
