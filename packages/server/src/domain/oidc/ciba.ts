/**
 * CIBA in poll mode (OpenID Connect Client-Initiated Backchannel Authentication 1.0; decisions §12,
 * §18). A site asks, from its server, that the owner confirm one of their agents: `login_hint` is
 * the agent's pairwise `act.sub` at that site (as an earlier sign-in gave it), `binding_message` is
 * shown to the owner as written. The request is an access request with a card of kind `oidc`, which
 * the owner answers with a passkey; the site polls the token endpoint with the CIBA grant:
 * `authorization_pending`, `slow_down` (+5 s each time it polls faster than the interval; never on
 * the first poll), `access_denied`, `expired_token`, then once the tokens of a new sign-in.
 *
 * Who may ask (issue 22: another account's client on the same host reached the owner):
 * - `login_hint` resolves only among the subjects this very client was given by a sign-in; a value
 *   another client holds, on the same host or not, is `unknown_user_id`, like one never issued;
 * - the agent must hold a live grant with `openid` at the subject's site: else `access_denied`;
 *   revoking that grant (or removing the agent) forgets the subjects, so `unknown_user_id` after;
 * - `requested_expiry` is raised to at least 60 s, so an expiring card cannot be refiled every second;
 * - each request counts against the owner's quotas (ciba-quota.ts and the open requests);
 * all checked before anything is written: a refused request leaves no card, push or record.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KnownClient } from './known-client.ts';
import { seconds } from '../../clock.ts';
import { newPendingRequest } from '../approvals/request-rules.ts';
import { expireStaleRequests } from '../approvals/expiry.ts';
import { fileRequest } from '../approvals/quota-filing.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { isGrantLive, liveGrant } from '../grants/usable.ts';
import { authenticateTokenClient } from './client-auth.ts';
import { countCibaRequest } from './ciba-quota.ts';
import { unreadableProblem } from '../readable-text.ts';
import { type OidcDeps, TOKEN_LIMITS } from './deps.ts';
import { OAuthError, invalidGrant, invalidRequest } from './oauth-error.ts';
import { allowedScopes, askedWithGrant, requestableScopes } from './scopes.ts';
import { isRedirectVerified } from './site-origins.ts';
import { startSignIn } from './sign-in-start.ts';
import type { TokenResponse } from './tokens.ts';

export const CIBA_GRANT_TYPE = 'urn:openid:params:grant-type:ciba';
export const CIBA_INTERVAL_SEC = 5;
export const CIBA_DEFAULT_EXPIRY_SEC = 300;
/**
 * The least lifetime of a request: a shorter `requested_expiry` is raised to it (as a longer one is
 * lowered to the most), and `expires_in` says what applies. One request of an agent at a site waits
 * at a time, so this is also the least time between two cards the owner leaves unanswered.
 */
export const CIBA_MIN_EXPIRY_SEC = 60;
export const CIBA_MAX_EXPIRY_SEC = 600;
export const BINDING_MESSAGE_MAX = 100;

export interface BcAuthorizeAnswer {
  auth_req_id: string;
  expires_in: number;
  interval: number;
}

const hashId = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

const cibaError = (error: string, why: string) => new OAuthError(error, why);

function bindingMessage(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if ([...raw].length > BINDING_MESSAGE_MAX) throw cibaError('invalid_binding_message', `binding_message must be at most ${BINDING_MESSAGE_MAX} characters: it is shown on the owner's phone as written`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(raw)) throw cibaError('invalid_binding_message', 'binding_message must not contain control characters (line breaks included)');
  const hidden = unreadableProblem('binding_message', raw);
  if (hidden !== null) throw cibaError('invalid_binding_message', hidden);
  return raw;
}

function requestedExpiry(raw: string | undefined): number {
  if (raw === undefined || raw === '') return CIBA_DEFAULT_EXPIRY_SEC;
  if (!/^[0-9]{1,7}$/.test(raw) || Number(raw) < 1) throw invalidRequest('requested_expiry must be a positive whole number of seconds');
  return Math.min(Math.max(Number(raw), CIBA_MIN_EXPIRY_SEC), CIBA_MAX_EXPIRY_SEC);
}

/** The client's sites (redirect URI hosts), each with the first redirect URI there. */
function sitesOf(client: KnownClient): Map<string, string> {
  const out = new Map<string, string>();
  for (const uri of client.redirectUris) {
    const host = new URL(uri).host;
    if (!out.has(host)) out.set(host, uri);
  }
  return out;
}

export async function bcAuthorize(d: OidcDeps, authorization: string | undefined, form: Map<string, string>, repeated: string[], ip: string | null): Promise<BcAuthorizeAnswer> {
  if (repeated.length > 0) throw invalidRequest(`parameters sent more than once: ${repeated.join(', ')}`);
  const client = await authenticateTokenClient(d, authorization, form);
  if (client.isPublic) throw cibaError('unauthorized_client', 'backchannel authentication is for confidential clients (a site with a server and a client secret)');
  await d.limiter.check(`oidc-ciba:${client.id}`, TOKEN_LIMITS.cibaRequestsPerMinute, 60);
  const rawScope = form.get('scope') ?? '';
  if (!rawScope.split(' ').includes('openid')) throw cibaError('invalid_scope', 'scope must include "openid"');
  if (form.has('login_hint_token') || form.has('id_token_hint')) throw invalidRequest('name the agent with login_hint (its act.sub at your site); login_hint_token and id_token_hint are not supported');
  const hint = form.get('login_hint');
  if (hint === undefined || hint === '' || hint.length > 200) throw invalidRequest('login_hint is required: the agent\'s act.sub from an ID token your site received');
  const message = bindingMessage(form.get('binding_message'));
  const expirySec = requestedExpiry(form.get('requested_expiry'));

  // Only a subject this client was given: one issued to another client is unknown here, with the
  // same answer as one never issued, so the answer tells nothing about other clients.
  // Its site must still be one of the client's (its owner may have removed that redirect URI).
  const sites = sitesOf(client);
  const found = await d.store.oidcSubjects.find(client.id, hint);
  const subject = found && sites.has(found.site) ? found : undefined;
  const agent = subject ? await d.store.agents.byId(subject.agentId) : undefined;
  const owner = agent ? await d.store.users.byId(agent.userId) : undefined;
  if (!subject || !agent || isAgentBlocked(agent) || !owner) throw cibaError('unknown_user_id', 'login_hint names no agent known to this client (it must be the act.sub of an ID token this client received, while the owner still allows the agent to sign in there)');

  const now = d.clock.now();
  const site = subject.site;
  const grant = await liveGrant(d.store.grants, agent.id, site, now);
  if (!grant || !grant.scopes.includes('openid')) throw cibaError('access_denied', 'the owner no longer allows this agent to sign in at your site (its access there expired or does not include "openid"); the agent must sign in through /oidc/authorize again first');
  await countCibaRequest(d, { agentId: agent.id, userId: agent.userId, clientId: client.id });
  const scopes = requestableScopes(rawScope, owner);
  const redirectUri = sites.get(site) ?? client.redirectUris[0] ?? '';
  const verified = isRedirectVerified(client, redirectUri);
  await expireStaleRequests(d, now, { agentId: agent.id, site });
  const asked = askedWithGrant(scopes, grant);
  const request = newPendingRequest(agent, site, now, {
    kind: 'initial', scopes: asked.scopes, userInfo: asked.userInfo, action: null, grantId: null, expiresAt: now + expirySec * 1000,
    oidc: { clientId: client.id, clientName: client.name, verified, flow: 'ciba', bindingMessage: message },
  });
  const id = randomBytes(32).toString('base64url');
  const created = await d.store.transaction(async (repos) => {
    if (!(await fileRequest(repos, request, now))) return false;
    await repos.oidcCiba.create({
      idHash: hashId(id), clientId: client.id, txnId: request.id, agentId: agent.id, userId: agent.userId, site, scopes,
      intervalSec: CIBA_INTERVAL_SEC, lastPollAt: null, consumedAt: null, createdAt: now, expiresAt: request.expiresAt,
    });
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'oidc', agentName: agent.name, site: verified ? site : `${site} (unverified site)`, scopes: request.scopes, userInfo: request.userInfo, bindingMessage: message, expiresAt: request.expiresAt }, repos);
    await d.activity.record({ userId: agent.userId, action: 'request.created', agentId: agent.id, site, detail: { txn_id: request.id, scopes: request.scopes, user_info: request.userInfo, oidc_client_id: client.id, verified_site: verified, flow: 'ciba', binding_message: message }, ip }, repos.activity);
    return true;
  });
  if (!created) throw invalidRequest('a request of this agent at this site is already waiting for the owner; poll it, or ask again once it is answered or expired');
  d.notifier.wake();
  return { auth_req_id: id, expires_in: expirySec, interval: CIBA_INTERVAL_SEC };
}

export async function redeemCiba(d: OidcDeps, client: KnownClient, form: Map<string, string>, jkt: string | null): Promise<TokenResponse> {
  const id = form.get('auth_req_id');
  if (id === undefined || id === '' || id.length > 200) throw invalidRequest('auth_req_id is missing');
  const idHash = hashId(id);
  const ciba = await d.store.oidcCiba.byIdHash(idHash);
  if (!ciba || ciba.clientId !== client.id) throw invalidGrant('auth_req_id is unknown');
  const now = d.clock.now();
  if (ciba.consumedAt !== null) throw invalidGrant('the tokens of this auth_req_id were issued already');
  if (ciba.expiresAt <= now) throw cibaError('expired_token', 'the owner did not answer in time; start again with /oidc/bc-authorize');
  const poll = await d.store.oidcCiba.poll(idHash, now);
  if (!poll.ok) {
    if (poll.slowDown) throw cibaError('slow_down', `polling too fast: wait at least ${poll.intervalSec} s between polls`);
    throw invalidGrant('auth_req_id is unknown');
  }
  const request = await d.store.authzRequests.byId(ciba.txnId);
  if (!request) throw invalidGrant('auth_req_id is unknown');
  if (request.status === 'pending') {
    if (request.expiresAt > now) throw cibaError('authorization_pending', 'the owner has not answered yet');
    throw cibaError('expired_token', 'the owner did not answer in time; start again with /oidc/bc-authorize');
  }
  if (request.status === 'expired') throw cibaError('expired_token', 'the owner did not answer in time; start again with /oidc/bc-authorize');
  if (request.status !== 'approved' || request.grantId === null) throw cibaError('access_denied', request.status === 'denied' ? 'the owner declined' : `the request is ${request.status}`);
  const grant = await d.store.grants.byId(request.grantId);
  const scopes = grant && isGrantLive(grant, now) ? allowedScopes(ciba.scopes, grant) : [];
  if (!scopes.includes('openid')) throw cibaError('access_denied', 'the access was revoked, or the owner did not approve "openid"');
  if (!(await d.store.oidcCiba.consume(idHash, now))) throw invalidGrant('the tokens of this auth_req_id were issued already');
  return startSignIn(d, {
    sid: randomBytes(24).toString('base64url'), clientId: client.id, userId: request.userId, agentId: request.agentId, grantId: request.grantId,
    site: ciba.site, scopes, amr: ['agent', 'passkey'], authTime: seconds(request.decidedAt ?? now), dpopJkt: jkt, resource: null,
  }, null, 'the tokens of this auth_req_id were issued already');
}
