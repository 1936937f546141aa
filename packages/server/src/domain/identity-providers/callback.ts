import { sha256Hex } from '../../crypto/random.ts';
import { AppError } from '../errors.ts';
import type { SignedIn } from '../accounts/accounts.ts';
import type { OAuthFlowPurpose, OAuthStateRecord, SessionMethod } from '../../store/ports/index.ts';
import type { OAuthProviderConfig } from '../../config/oauth-providers.ts';
import { APPROVAL_MAX_AGE_SEC, type IdentityProviderDeps } from './deps.ts';
import type { VerifiedIdentity } from './issuer-port.ts';
import { requireIdentityManagement } from './identities.ts';

/** What came back to GET /api/oauth/{provider}/callback. */
export interface CallbackInput {
  provider: string;
  code: string;
  state: string;
  error: string;
  /** The callback URL as received (openid-client reads the code, state and `iss` from it). */
  url: URL;
  /** The browser-binding cookie, if the browser sent one. */
  browserToken: string | null;
  /** The owner this browser is signed in as, if any, and how that session was made. */
  sessionUserId: string | null;
  sessionMethod: SessionMethod | null;
  ip: string;
}

/** How a flow ended: the route turns each into a redirect into the owner app, never an error status. */
export type CallbackOutcome =
  | { kind: 'signed_in'; provider: string; signedIn: SignedIn }
  | { kind: 'linked'; provider: string; label: string }
  | { kind: 'approved'; provider: string; txnId: string }
  | { kind: 'refused'; provider: string; purpose: OAuthFlowPurpose | null; reason: RefusalReason; detail: string; txnId?: string };

/**
 * Why a flow was refused. The app words each reason itself and never shows `detail` (which a crafted
 * link could carry): a stable list, documented in the route.
 */
export type RefusalReason =
  /** The start itself was refused for another reason (a 4xx of the domain). */
  | 'not_started'
  | 'rate_limited' | 'passkey_session_needed' | 'session_changed'
  | 'unknown_provider' | 'bad_state' | 'other_browser' | 'access_denied' | 'issuer_error' | 'invalid_response'
  | 'not_linked' | 'linked_elsewhere' | 'provider_taken' | 'wrong_owner' | 'stale_sign_in' | 'not_approved';

const refused = (provider: string, purpose: OAuthFlowPurpose | null, reason: RefusalReason, detail: string, txnId?: string): CallbackOutcome =>
  ({ kind: 'refused', provider, purpose, reason, detail, ...(txnId ? { txnId } : {}) });

/**
 * Finishes a flow. Its state is consumed first, whatever follows (single-use: one UPDATE, exactly one
 * caller wins), and must be of this provider; a sign-in or link must come back to the browser that
 * started it. Then openid-client checks the code exchange and the ID token (issuer, audience,
 * signature, nonce, PKCE; for an approval `auth_time` too). An identity that is not linked never
 * makes or takes an account, whatever its email says.
 */
export async function finishFlow(d: IdentityProviderDeps, input: CallbackInput): Promise<CallbackOutcome> {
  const provider = d.providers.find((p) => p.name === input.provider);
  if (!provider) return refused(input.provider, null, 'unknown_provider', `no identity provider named "${input.provider}" is configured`);
  const again = 'Start again from the app.';
  const flow = input.state ? await d.store.oauthStates.consume(sha256Hex(input.state), d.clock.now()) : undefined;
  if (!flow) return refused(provider.name, null, 'bad_state', `This ${provider.label} sign-in link is unknown, already used or expired. ${again}`);
  if (flow.provider !== provider.name) return refused(provider.name, null, 'bad_state', `This answer belongs to another sign-in flow. ${again}`);
  const txnId = flow.txnId ?? undefined;
  if (flow.browserHash !== null && (input.browserToken === null || sha256Hex(input.browserToken) !== flow.browserHash)) {
    return refused(provider.name, flow.purpose, 'other_browser', `This ${provider.label} sign-in was started in another browser; start it again here.`);
  }
  if (input.error) {
    if (input.error === 'access_denied') return refused(provider.name, flow.purpose, 'access_denied', `${provider.label} answered access_denied: the sign-in was cancelled or refused there. Nothing changed.`, txnId);
    return refused(provider.name, flow.purpose, 'issuer_error', `${provider.label} answered with an error (${clipCode(input.error)}). Nothing changed.`, txnId);
  }
  if (!input.code) return refused(provider.name, flow.purpose, 'invalid_response', `${provider.label} sent no authorization code. ${again}`, txnId);

  let identity: VerifiedIdentity;
  try {
    identity = await d.issuers.finish(provider, input.url, { state: input.state, nonce: flow.nonce, codeVerifier: flow.codeVerifier, maxAgeSec: flow.purpose === 'approve' ? APPROVAL_MAX_AGE_SEC : null });
  } catch (e) {
    return refused(provider.name, flow.purpose, 'invalid_response', `${provider.label}'s answer could not be verified (${issuerProblem(e)}). Nothing changed. ${again}`, txnId);
  }
  // openid-client has compared the ID token's `iss` with the issuer discovered at the configured
  // address (for Microsoft's multi-tenant `common`, the token's tenant put in place of `{tenantid}`),
  // so `iss` as the token says it, with `sub`, names the identity.

  if (flow.purpose === 'sign_in') return signIn(d, provider, identity, input.ip);
  if (flow.purpose === 'link') return link(d, provider, flow, identity, input);
  return approve(d, provider, flow, identity, input.ip);
}

async function signIn(d: IdentityProviderDeps, provider: OAuthProviderConfig, identity: VerifiedIdentity, ip: string): Promise<CallbackOutcome> {
  const linked = await d.store.oauthIdentities.byIdentity(identity.issuer, identity.subject);
  const user = linked && (await d.store.users.byId(linked.userId));
  if (!user) {
    return refused(provider.name, 'sign_in', 'not_linked', `This ${provider.label} account is not linked to a Mandate account. Sign in with your password or a passkey, then link ${provider.label} in Account. (No account is made or matched by email.)`);
  }
  const signedIn = await d.accounts.startSession(user, 'oauth');
  await d.activity.record({ userId: user.id, action: 'oauth.sign_in', detail: { provider: provider.name }, ip });
  return { kind: 'signed_in', provider: provider.name, signedIn };
}

async function link(d: IdentityProviderDeps, provider: OAuthProviderConfig, flow: OAuthStateRecord, identity: VerifiedIdentity, input: CallbackInput): Promise<CallbackOutcome> {
  const userId = flow.userId;
  if (userId === null || input.sessionUserId !== userId) {
    return refused(provider.name, 'link', 'session_changed', `This browser is no longer signed in as the account that started linking ${provider.label}. Sign in and start again.`);
  }
  // Checked at the start, and again here: a passkey added meanwhile raises the bar.
  try {
    await requireIdentityManagement(d, { userId, method: input.sessionMethod ?? 'password' });
  } catch (e) {
    if (e instanceof AppError && e.status < 500) return refused(provider.name, 'link', 'passkey_session_needed', e.detail);
    throw e;
  }
  const created = await d.store.oauthIdentities.link({ issuer: identity.issuer, subject: identity.subject, userId, provider: provider.name, createdAt: d.clock.now() });
  if (!created) {
    const holder = await d.store.oauthIdentities.byIdentity(identity.issuer, identity.subject);
    if (holder?.userId === userId) return { kind: 'linked', provider: provider.name, label: provider.label };
    if (holder) return refused(provider.name, 'link', 'linked_elsewhere', `This ${provider.label} account is linked to another Mandate account already. Unlink it there first.`);
    return refused(provider.name, 'link', 'provider_taken', `Another ${provider.label} account is linked to yours already; unlink it first.`);
  }
  await d.activity.record({ userId, action: 'oauth.linked', detail: { provider: provider.name, ...(identity.email ? { email: identity.email } : {}) }, ip: input.ip });
  await d.notifier.security(userId, `${provider.label} linked`, `${identity.email ?? `A ${provider.label} account`} can now sign you in to Mandate and approve access requests. If this was not you, unlink it in Account and change your password.`);
  return { kind: 'linked', provider: provider.name, label: provider.label };
}

async function approve(d: IdentityProviderDeps, provider: OAuthProviderConfig, flow: OAuthStateRecord, identity: VerifiedIdentity, ip: string): Promise<CallbackOutcome> {
  const txnId = flow.txnId ?? '';
  const linked = await d.store.oauthIdentities.byIdentity(identity.issuer, identity.subject);
  if (!flow.userId || !linked || linked.userId !== flow.userId) {
    return refused(provider.name, 'approve', 'wrong_owner', `This ${provider.label} account is not the one linked to the account the request belongs to. Nothing was approved.`, txnId);
  }
  const ageSec = identity.authTime === null ? null : Math.floor(d.clock.now() / 1000) - identity.authTime;
  if (ageSec === null || ageSec > APPROVAL_MAX_AGE_SEC) {
    return refused(provider.name, 'approve', 'stale_sign_in', `${provider.label} did not sign you in again just now (an approval needs a sign-in at most ${APPROVAL_MAX_AGE_SEC / 60} minutes old). Nothing was approved; try again.`, txnId);
  }
  try {
    await d.approvals.approveByIdentityProvider(flow.userId, txnId, { provider: provider.name, limits: flow.limits ?? undefined }, ip);
  } catch (e) {
    if (e instanceof AppError && e.status < 500) return refused(provider.name, 'approve', 'not_approved', `Not approved: ${e.message}`, txnId);
    throw e;
  }
  return { kind: 'approved', provider: provider.name, txnId };
}

/** An issuer's error code as shown back: only the characters RFC 6749 allows in one, and short. */
const clipCode = (code: string): string => code.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '').slice(0, 60);

/** openid-client's reason, without anything it may quote from the issuer's answer. */
function issuerProblem(e: unknown): string {
  if (!(e instanceof Error)) return 'unexpected answer';
  // openid-client wraps oauth4webapi's error, whose own message says which check failed (the
  // `iss` parameter, the nonce, audience or auth_time claim) without quoting values, and names a
  // claim as `cause.claim`: walk down the causes to the innermost one.
  let inner: Error = e;
  for (let depth = 0; depth < 4 && inner.cause instanceof Error; depth++) inner = inner.cause;
  const cause: unknown = inner.cause;
  const claim = cause && typeof cause === 'object' && 'claim' in cause && typeof cause.claim === 'string' ? ` (${cause.claim})` : '';
  const detail = inner === e ? e.message : `${e.message}: ${inner.message}`;
  return `${detail.slice(0, 200)}${claim}`;
}
