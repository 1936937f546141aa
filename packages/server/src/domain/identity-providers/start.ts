import { randomToken, sha256Hex } from '../../crypto/random.ts';
import { checkClient } from '../client-limit.ts';
import { conflict } from '../errors.ts';
import type { OAuthFlowPurpose, OAuthStateRecord } from '../../store/ports/index.ts';
import { FLOW_LIFETIME_MS, type IdentityProviderDeps, START_LIMIT } from './deps.ts';
import { type ManagingOwner, providerNamed, requireIdentityManagement } from './identities.ts';

export interface StartedFlow {
  /** Where to send the owner: the issuer's authorization URL. */
  url: string;
  /** The browser-binding secret (a sign-in or a link): set as a short-lived cookie; null for an approval. */
  browserToken: string | null;
}

/**
 * GET /api/oauth/{provider}/start. Signed in: a link of the returned identity to this owner; signed
 * out: a sign-in as the owner it is linked to. Both are bound to the browser that started them (a
 * cookie whose hash the state keeps), so a callback URL made by someone else cannot sign a victim in
 * to the attacker's account (login CSRF) or link in someone else's browser.
 */
export async function startBrowserFlow(d: IdentityProviderDeps, name: string, owner: ManagingOwner | null, ip: string): Promise<StartedFlow> {
  const provider = providerNamed(d, name);
  await checkClient(d.limiter, 'oauth-start', ip, START_LIMIT);
  if (owner) {
    await requireIdentityManagement(d, owner);
    const linked = await d.store.oauthIdentities.listForUser(owner.userId);
    if (linked.some((i) => i.provider === provider.name)) throw conflict(`a ${provider.label} account is linked already; unlink it first to link another`);
  }
  const browserToken = randomToken();
  const url = await newFlow(d, { purpose: owner ? 'link' : 'sign_in', provider: provider.name, userId: owner?.userId ?? null, txnId: null, limits: null, browserHash: sha256Hex(browserToken) });
  return { url, browserToken };
}

/**
 * POST /api/txn/{txn_id}/oauth/{provider}: an approval by a fresh sign-in at a linked provider. The
 * state holds (owner, request, provider, limits) server-side and no browser binding: the owner may
 * finish on another device. Refused up front when the request cannot be approved this way.
 */
export async function startApproval(d: IdentityProviderDeps, name: string, userId: string, txnId: string, limits: OAuthStateRecord['limits'], ip: string): Promise<string> {
  const provider = providerNamed(d, name);
  await checkClient(d.limiter, 'oauth-start', ip, START_LIMIT);
  await d.approvals.checkIdentityProviderApproval(userId, txnId, limits ?? undefined);
  const linked = await d.store.oauthIdentities.listForUser(userId);
  if (!linked.some((i) => i.provider === provider.name)) throw conflict(`no ${provider.label} account is linked to yours; link one in Account first, or approve with a passkey`);
  return newFlow(d, { purpose: 'approve', provider: provider.name, userId, txnId, limits, browserHash: null });
}

async function newFlow(d: IdentityProviderDeps, flow: { purpose: OAuthFlowPurpose; provider: string; userId: string | null; txnId: string | null; limits: OAuthStateRecord['limits']; browserHash: string | null }): Promise<string> {
  const provider = providerNamed(d, flow.provider);
  const state = randomToken();
  const nonce = randomToken();
  const codeVerifier = randomToken();
  // The issuer first: when it cannot be reached, no state is left behind.
  const url = await d.issuers.authorizationUrl(provider, { state, nonce, codeVerifier, freshLogin: flow.purpose === 'approve' });
  const now = d.clock.now();
  await d.store.oauthStates.create({ ...flow, stateHash: sha256Hex(state), nonce, codeVerifier, createdAt: now, expiresAt: now + FLOW_LIFETIME_MS });
  return url;
}
