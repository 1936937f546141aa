/**
 * /oidc/authorize (decisions §12, §18), in named steps: find the client and the redirect URI (never
 * redirect anywhere unregistered), check the request (code flow, PKCE S256), authenticate the agent
 * (its header), then answer with a code at once when a live grant of that agent for the client's
 * site covers the scopes, or file an access request the owner approves with a passkey and send the
 * agent to the wait address.
 */
import type { AgentRecord, AuthzRequestRecord } from '../../store/ports/index.ts';
import { badRequest, conflict } from '../errors.ts';
import { seconds } from '../../clock.ts';
import { liveGrant, usableGrant } from '../grants/usable.ts';
import { newPendingRequest } from '../approvals/request-rules.ts';
import { expireStaleRequests } from '../approvals/expiry.ts';
import { countAccessRequest, fileRequest } from '../approvals/quota-filing.ts';
import { type RequestedUrl, verifyAgentHeader } from './agent-header.ts';
import { CODE_LIFETIME_MS, type OidcDeps, TOKEN_LIMITS } from './deps.ts';
import { mintCode, newCodeId } from './codes.ts';
import { JKT } from './dpop.ts';
import { allowedScopes, askedWithGrant, requestableScopes } from './scopes.ts';
import { isRedirectVerified } from './site-origins.ts';
import type { KnownClient } from './known-client.ts';
import { OAuthError } from './oauth-error.ts';
import { resolveClient } from './resolve-client.ts';
import { S256_CHALLENGE } from '../../crypto/pkce.ts';

/** What a wait address's `k` carries: the authorize call, sealed, bound to its txn. */
export interface PendingAuthorize {
  txn: string;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  nonce: string | null;
  agentId: string;
  scopes: string[];
  /** `dpop_jkt`: the key the code is bound to, or null. */
  dpopJkt: string | null;
}

export const WAIT_LABEL = 'oidc-wait/v1';

export const MAX_PARAM = 2048;

/** Adds the error (or code) parameters to the registered redirect URI, keeping its own query. */
export function redirectTo(issuer: string, redirectUri: string, params: Record<string, string | null>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.append(k, v);
  u.searchParams.append('iss', issuer);
  return u.href;
}

export function errorRedirect(issuer: string, redirectUri: string, state: string | null, error: string, description: string): string {
  return redirectTo(issuer, redirectUri, { error, error_description: description, state });
}

/** Parameters as sent: one value each (a repeated parameter is refused). */
export type AuthorizeParams = Map<string, string>;

/** A request error after the redirect URI is known good: answered by an error redirect to it. */
export class RedirectError extends Error {
  constructor(readonly error: string, readonly description: string) {
    super(description);
  }
}

export interface AuthorizeInput {
  params: AuthorizeParams;
  /** Names of parameters sent more than once. */
  repeated: string[];
  agentHeader: string | undefined;
  requested: RequestedUrl;
  ip: string | null;
}

/** Answers the address to send the agent to (302). Throws 400 (no redirect) or 401 (bad agent header). */
export async function authorize(d: OidcDeps, input: AuthorizeInput): Promise<string> {
  const { params } = input;
  const { client, redirectUri, state } = await clientAndRedirect(d, params, input.ip);
  try {
    const req = checkRequest(input);
    const agent = await verifyAgentHeader(d, input.agentHeader, input.requested);
    return await decide(d, client, redirectUri, state, req, agent, input.ip);
  } catch (e) {
    if (e instanceof RedirectError) return errorRedirect(d.issuer, redirectUri, state, e.error, e.description);
    throw e;
  }
}

/**
 * The first steps of every authorization request: the client, the redirect URI exactly as
 * registered, and `state`. Every problem here is 400 and no redirect (RFC 6749 §4.1.2.1).
 */
export async function clientAndRedirect(d: OidcDeps, params: AuthorizeParams, ip: string | null): Promise<{ client: KnownClient; redirectUri: string; state: string | null }> {
  const client = await findClient(d, params.get('client_id'), ip);
  const redirectUri = registeredRedirect(client, params.get('redirect_uri'));
  const rawState = params.get('state');
  const state = rawState === undefined || rawState === '' ? null : rawState;
  if (state !== null && state.length > MAX_PARAM) throw badRequest(`state is longer than ${MAX_PARAM} characters`);
  return { client, redirectUri, state };
}

/** The client, or 400 without a redirect (RFC 6749 §4.1.2.1: its redirect URIs are not known to be its own). */
async function findClient(d: OidcDeps, clientId: string | undefined, ip: string | null): Promise<KnownClient> {
  try {
    return await resolveClient(d, clientId, ip);
  } catch (e) {
    if (e instanceof OAuthError) throw badRequest(e.detail, { error: e.error });
    throw e;
  }
}

/** The redirect URI, exactly as registered (compared as strings); otherwise 400 and no redirect. */
function registeredRedirect(client: KnownClient, uri: string | undefined): string {
  // Required (OpenID Connect Core §3.1.2.1), so the token request can be matched against it.
  if (uri === undefined) throw badRequest('redirect_uri is missing: send one of the client\'s registered redirect URIs');
  if (!client.redirectUris.includes(uri)) throw badRequest('redirect_uri is not registered for this client (it is compared exactly, as a string)');
  return uri;
}

interface CheckedRequest {
  codeChallenge: string;
  nonce: string | null;
  /** The `scope` parameter as sent; which of them apply depends on the owner (scopes.ts). */
  rawScope: string;
  dpopJkt: string | null;
  /** prompt=none */
  silent: boolean;
  /** prompt=login|consent or max_age=0: the owner confirms with a passkey even when a grant covers it. */
  fresh: boolean;
}

/**
 * The checks every authorization request passes, an agent's or a person's browser: one value per
 * parameter, code flow, no request objects, PKCE S256 only, `dpop_jkt` and `max_age` well formed.
 * Throws RedirectError.
 */
export function checkCommon(params: AuthorizeParams, repeated: string[]): Omit<CheckedRequest, 'silent' | 'fresh'> & { prompts: string[] } {
  const p = params;
  if (repeated.length > 0) throw new RedirectError('invalid_request', `parameters sent more than once: ${repeated.join(', ')}`);
  for (const [k, v] of p) if (v.length > MAX_PARAM) throw new RedirectError('invalid_request', `${k} is longer than ${MAX_PARAM} characters`);
  if (p.has('request')) throw new RedirectError('request_not_supported', 'request objects are not supported');
  if (p.has('request_uri')) throw new RedirectError('request_uri_not_supported', 'request_uri is not supported');
  if (p.get('response_type') !== 'code') throw new RedirectError('unsupported_response_type', 'response_type must be "code" (code flow only)');
  const mode = p.get('response_mode');
  if (mode !== undefined && mode !== 'query') throw new RedirectError('invalid_request', 'response_mode must be "query"');
  const method = p.get('code_challenge_method');
  const challenge = p.get('code_challenge');
  if (challenge === undefined || method !== 'S256') throw new RedirectError('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256 (plain is not accepted)');
  if (!S256_CHALLENGE.test(challenge)) throw new RedirectError('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)');
  const dpopJkt = p.get('dpop_jkt');
  if (dpopJkt !== undefined && !JKT.test(dpopJkt)) throw new RedirectError('invalid_request', 'dpop_jkt must be the RFC 7638 thumbprint (base64url SHA-256) of your DPoP key');
  const prompts = (p.get('prompt') ?? '').split(' ').filter((s) => s !== '');
  if (prompts.includes('none') && prompts.length > 1) throw new RedirectError('invalid_request', 'prompt=none cannot be combined with other values');
  const maxAgeRaw = p.get('max_age');
  if (maxAgeRaw !== undefined && !/^[0-9]{1,10}$/.test(maxAgeRaw)) throw new RedirectError('invalid_request', 'max_age must be a whole number of seconds');
  const nonce = p.get('nonce');
  return {
    codeChallenge: challenge,
    nonce: nonce === undefined || nonce === '' ? null : nonce,
    rawScope: p.get('scope') ?? '',
    dpopJkt: dpopJkt ?? null,
    prompts,
  };
}

function checkRequest(input: AuthorizeInput): CheckedRequest {
  const { prompts, ...common } = checkCommon(input.params, input.repeated);
  if (!common.rawScope.split(' ').includes('openid')) throw new RedirectError('invalid_scope', 'scope must include "openid"');
  if (prompts.includes('select_account')) throw new RedirectError('account_selection_required', 'the agent signs in as itself; there is no account to select');
  const maxAgeRaw = input.params.get('max_age');
  return {
    ...common,
    silent: prompts.includes('none'),
    fresh: prompts.includes('login') || prompts.includes('consent') || maxAgeRaw === '0',
  };
}

async function decide(d: OidcDeps, client: KnownClient, redirectUri: string, state: string | null, req: CheckedRequest, agent: AgentRecord, ip: string | null): Promise<string> {
  await d.limiter.check(`oidc-authorize:${agent.id}`, TOKEN_LIMITS.authorizePerAgentPerMinute, 60);
  const site = new URL(redirectUri).host;
  const now = d.clock.now();
  const scopes = requestableScopes(req.rawScope, await d.store.users.byId(agent.userId));
  const grant = await usableGrant(d.store.grants, agent.id, site, now);
  const covered = grant !== undefined && allowedScopes(scopes, grant).length === scopes.length;
  if (covered && !req.fresh) {
    const code = mintCode(d.secret, {
      jti: newCodeId(), clientId: client.id, redirectUri, codeChallenge: req.codeChallenge, nonce: req.nonce,
      agentId: agent.id, userId: agent.userId, grantId: grant.id, site, scopes,
      authTime: seconds(now), amr: ['agent', 'grant'], expiresAt: now + CODE_LIFETIME_MS, dpopJkt: req.dpopJkt, resource: null,
    });
    await d.activity.record({ userId: agent.userId, action: 'oidc.sign_in', agentId: agent.id, site, detail: { client_id: client.id, amr: ['agent', 'grant'], scopes }, ip });
    return redirectTo(d.issuer, redirectUri, { code, state });
  }
  if (req.silent) throw new RedirectError(covered ? 'login_required' : 'consent_required', 'the owner must approve this sign-in, and prompt=none forbids asking');
  const request = await pendingRequest(d, client, redirectUri, agent, site, scopes, ip);
  const pending: PendingAuthorize = { txn: request.id, clientId: client.id, redirectUri, state, codeChallenge: req.codeChallenge, nonce: req.nonce, agentId: agent.id, scopes, dpopJkt: req.dpopJkt };
  const k = d.secret.seal(`${WAIT_LABEL}:${request.id}`, pending);
  return `${d.issuer}/oidc/authorize/wait/${request.id}?k=${k}`;
}

/**
 * An access request for the site with the OIDC scopes, as any other (approving it with the passkey
 * creates the grant), announced to the owner as a card of kind `oidc`. A request of this agent for
 * this site already waiting is reused when it asks for at least these scopes.
 */
async function pendingRequest(d: OidcDeps, client: KnownClient, redirectUri: string, agent: AgentRecord, site: string, scopes: string[], ip: string | null): Promise<AuthzRequestRecord> {
  const now = d.clock.now();
  await countAccessRequest(d, agent.id);
  await expireStaleRequests(d, now, { agentId: agent.id, site });
  const verified = isRedirectVerified(client, redirectUri);
  const asked = askedWithGrant(scopes, await liveGrant(d.store.grants, agent.id, site, now));
  const userInfo = asked.userInfo;
  const request = newPendingRequest(agent, site, now, {
    kind: 'initial', scopes: asked.scopes, userInfo, action: null, grantId: null,
    oidc: { clientId: client.id, clientName: client.name, verified, flow: 'authorize', bindingMessage: null },
  });
  const created = await d.store.transaction(async (repos) => {
    if (!(await fileRequest(repos, request, now))) return false;
    await d.notifier.approvalRequested(agent.userId, { txnId: request.id, kind: 'oidc', agentName: agent.name, site: verified ? site : `${site} (unverified site)`, scopes: request.scopes, userInfo, expiresAt: request.expiresAt }, repos);
    await d.activity.record({ userId: agent.userId, action: 'request.created', agentId: agent.id, site, detail: { txn_id: request.id, scopes: request.scopes, user_info: userInfo, oidc_client_id: client.id, verified_site: verified }, ip }, repos.activity);
    return true;
  });
  if (created) {
    d.notifier.wake();
    return request;
  }
  const waiting = (await d.store.authzRequests.listPendingForUser(agent.userId, now)).find((r) => r.agentId === agent.id && r.site === site && r.kind === 'initial');
  if (waiting && allowedScopes(scopes, waiting).length === scopes.length) return waiting;
  throw conflict('a request of this agent for this site is already waiting for the owner', { next_step: 'wait for the owner to answer it, or retry after it expires (300 s)' });
}
