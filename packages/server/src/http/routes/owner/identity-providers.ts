import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import type { SessionMethod } from '../../../store/ports/index.ts';
import { AppError } from '../../../domain/errors.ts';
import { withErrors } from '../../schemas/common.ts';
import { TxnParams } from '../../schemas/approvals.ts';
import { ApproveLimitsIn } from './approvals.ts';
import type { CallbackOutcome, RefusalReason } from '../../../domain/identity-providers/callback.ts';
import { APPROVAL_MAX_AGE_SEC, FLOW_LIFETIME_MS, START_LIMIT } from '../../../domain/identity-providers/deps.ts';
import { redirectUriOf } from '../../../domain/identity-providers/issuer-port.ts';

const ProviderName = Type.String({ pattern: '^[a-z][a-z0-9]{0,31}$', description: 'a configured provider name (OAUTH_PROVIDERS), such as `google`' });
const ProviderParams = Type.Object({ provider: ProviderName });
const ProviderOut = Type.Object({
  name: Type.String(),
  label: Type.String({ description: 'what the button says: "Sign in with <label>"' }),
  linked: Type.Boolean({ description: 'an identity at this provider is linked to the signed-in owner (false when signed out)' }),
});
const CallbackQuery = Type.Object({
  code: Type.String({ default: '', maxLength: 4096 }),
  state: Type.String({ default: '', maxLength: 512 }),
  error: Type.String({ default: '', maxLength: 256 }),
}, { additionalProperties: true });

/** A start's refusal by its status: the app words each reason (views/identity-return.ts). */
function startRefusal(status: number): RefusalReason {
  if (status === 404) return 'unknown_provider';
  if (status === 429) return 'rate_limited';
  if (status === 403) return 'passkey_session_needed';
  if (status === 409) return 'provider_taken';
  return 'not_started';
}

/** The app's views each outcome lands on; the outcome rides in the fragment, after `?`, for views/identity-return.ts. */
function appLocation(outcome: CallbackOutcome): string {
  const q = new URLSearchParams({ oauth: outcome.kind, provider: outcome.provider });
  if (outcome.kind === 'linked') return `/app#account?${q}`;
  if (outcome.kind === 'signed_in') return `/app#requests?${q}`;
  if (outcome.kind === 'approved') return `/app#requests/${outcome.txnId}?${q}`;
  q.set('reason', outcome.reason);
  q.set('detail', outcome.detail);
  const view = outcome.purpose === 'link' ? 'account' : outcome.txnId ? `requests/${outcome.txnId}` : 'requests';
  return `/app#${view}?${q}`;
}

const START_DESCRIPTION = `Sends the browser (302) to the identity provider, with PKCE (S256), \`state\` and \`nonce\`. Signed in: the identity that comes back is **linked** to this owner (once the owner has a passkey, only a passkey session may link, as for adding a passkey; a provider already linked must be unlinked first). Signed out: the owner the identity is linked to is **signed in** (a session of method \`oauth\`). The flow is bound to this browser by a short-lived cookie and lives ${FLOW_LIFETIME_MS / 60_000} minutes. Always a redirect, never an error status: a refusal (unknown provider, too many starts: ${START_LIMIT.perAddress} per client address per ${START_LIMIT.windowSec / 60} minutes, the issuer unreachable) goes to \`/app#…?oauth=refused&reason=…&detail=…\`. Register \`<BASE_URL>/api/oauth/<name>/callback\` at the provider as the redirect URI (docs/operations/identity-providers.md).`;

const CALLBACK_DESCRIPTION = `Where the identity provider sends the browser back. The \`state\` is consumed at once (single-use, whatever follows) and must belong to this provider and, for a sign-in or link, to this browser; the code is exchanged and the ID token checked (issuer, audience, signature, nonce, PKCE; for an approval \`auth_time\` at most ${APPROVAL_MAX_AGE_SEC / 60} minutes old). An identity that is not linked never creates or takes over an account, whatever its email. Always a 302 into the app: \`/app#requests?oauth=signed_in\`, \`/app#account?oauth=linked\`, \`/app#requests/{txn_id}?oauth=approved\`, or \`?oauth=refused&reason=…&detail=…\` with a readable \`detail\` (reasons, which the app words itself, never echoing \`detail\`: from the start \`unknown_provider\`, \`rate_limited\`, \`passkey_session_needed\`, \`provider_taken\`, \`issuer_error\`, \`not_started\`; from the callback \`bad_state\`, \`other_browser\`, \`access_denied\`, \`issuer_error\`, \`invalid_response\`, \`not_linked\`, \`linked_elsewhere\`, \`provider_taken\`, \`session_changed\`, \`passkey_session_needed\`, \`wrong_owner\`, \`stale_sign_in\`, \`not_approved\`, \`unknown_provider\`).`;

export async function identityProviderRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const secure = s.config.baseUrl.startsWith('https:');
  // The browser binding of a sign-in or link; `__Host-` on https, like the session cookie.
  const flowCookie = secure ? '__Host-oauth_flow' : 'oauth_flow';
  const cookieOptions = { httpOnly: true, sameSite: 'lax', secure, path: '/' } as const;
  const label = (name: string) => s.config.oauthProviders.find((p) => p.name === name)?.label ?? name;

  const refuse = (reply: FastifyReply, provider: string, purpose: 'link' | 'sign_in', detail: string, reason: RefusalReason = 'not_started') =>
    reply.redirect(appLocation({ kind: 'refused', provider, purpose, reason, detail }), 302);

  app.get('/api/oauth/providers', {
    schema: {
      summary: 'Identity providers one may sign in with',
      description: 'Every configured provider with `linked` for the signed-in owner; signed out, `linked` is false throughout (the sign-in page lists the buttons).',
      tags: ['identity-providers'],
      response: withErrors({ 200: Type.Array(ProviderOut) }, 401),
    },
  }, async (request) => {
    const owner = await s.auth.optional(request);
    return s.identityProviders.list(owner?.user.id ?? null);
  });

  app.get('/api/oauth/:provider/start', {
    schema: { summary: 'Begin identity-provider sign-in (or linking, when signed in)', description: START_DESCRIPTION, tags: ['identity-providers'], params: ProviderParams },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { provider } = request.params;
    let owner;
    try {
      owner = await s.auth.optional(request);
    } catch {
      owner = undefined; // an expired bearer token: signed out
    }
    const purpose = owner ? 'link' : 'sign_in';
    try {
      const flow = await s.identityProviders.start(provider, owner ? { userId: owner.user.id, method: owner.method } : null, request.ip);
      if (flow.browserToken) reply.setCookie(flowCookie, flow.browserToken, { ...cookieOptions, maxAge: FLOW_LIFETIME_MS / 1000 });
      return reply.redirect(flow.url, 302);
    } catch (e) {
      if (e instanceof AppError && e.status < 500) return refuse(reply, provider, purpose, e.detail, startRefusal(e.status));
      request.log.warn({ provider, err: e instanceof Error ? e.message : String(e) }, 'identity provider start failed');
      return refuse(reply, provider, purpose, `${label(provider)} could not be reached just now; try again in a moment.`, 'issuer_error');
    }
  });

  app.get('/api/oauth/:provider/callback', {
    schema: { summary: 'Finish identity-provider sign-in, linking or approval', description: CALLBACK_DESCRIPTION, tags: ['identity-providers'], params: ProviderParams, querystring: CallbackQuery },
  }, async (request: FastifyRequest<{ Params: { provider: string }; Querystring: { code: string; state: string; error: string } }>, reply) => {
    reply.header('cache-control', 'no-store');
    const { provider } = request.params;
    const { code, state, error } = request.query;
    const browserToken = request.cookies[flowCookie] ?? null;
    let session: { user: { id: string }; method: SessionMethod } | undefined;
    try {
      session = await s.auth.optional(request);
    } catch {
      session = undefined; // an expired bearer token: signed out
    }
    // openid-client takes the redirect_uri of the token request from this URL: the registered one, with the query as received.
    const url = new URL(redirectUriOf(s.config.baseUrl, provider));
    url.search = new URL(request.url, 'http://callback').search;
    let outcome: CallbackOutcome;
    try {
      outcome = await s.identityProviders.finish({ provider, code, state, error, url, browserToken, sessionUserId: session?.user.id ?? null, sessionMethod: session?.method ?? null, ip: request.ip });
    } catch (e) {
      request.log.error({ provider, err: e instanceof Error ? e.message : String(e) }, 'identity provider callback failed');
      outcome = { kind: 'refused', provider, purpose: null, reason: 'issuer_error', detail: 'Something went wrong on our side while finishing this sign-in; nothing changed. Try again.' };
    }
    // The flow's cookie has done its work once a flow was found; an unknown or used state (an old
    // callback opened again) leaves it, so a flow started since in this browser can still finish.
    const stateFound = !(outcome.kind === 'refused' && (outcome.reason === 'bad_state' || outcome.reason === 'unknown_provider'));
    if (browserToken && stateFound) reply.clearCookie(flowCookie, cookieOptions);
    if (outcome.kind === 'signed_in') s.auth.signIn(reply, outcome.signedIn);
    return reply.redirect(appLocation(outcome), 302);
  });

  app.delete('/api/oauth/:provider', {
    schema: {
      summary: 'Unlink an identity provider',
      description: 'The owner\'s identity at this provider no longer signs in or approves. Once the owner has a passkey, only a passkey session may unlink (403 with `next_step` otherwise), as for removing a passkey. 404 when none is linked or the provider is unknown.',
      tags: ['identity-providers'],
      params: ProviderParams,
      response: withErrors({ 200: Type.Object({ ok: Type.Boolean() }) }, 401, 403, 404),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    await s.identityProviders.unlink({ userId: owner.user.id, method: owner.method }, request.params.provider, request.ip);
    return { ok: true };
  });

  app.post('/api/txn/:txn_id/oauth/:provider', {
    schema: {
      summary: 'Approve a request by signing in again with a linked identity provider',
      description: `Answers \`{redirect}\`: the provider's sign-in page, with \`max_age=0\` and \`prompt=login\`. The flow's state is kept server-side, bound to (owner, request, provider, limits), so the callback may come back in another browser or device. The callback approves only when the identity that signs in is the one linked to the request's owner and \`auth_time\` is at most ${APPROVAL_MAX_AGE_SEC / 60} minutes old; it then approves as a passkey would (same grant, activity record and notices). Only access requests (\`initial\`): a step-up needs a passkey (**409**). Body: \`ApproveLimitsIn\` or null (400 for limits out of range). **404** unknown request or another owner's, or unknown provider; **409** not pending, not an access request, no identity of this provider linked, or past the live-sites quota.`,
      tags: ['identity-providers', 'approvals'],
      params: Type.Composite([TxnParams, ProviderParams]),
      body: Type.Optional(Type.Union([ApproveLimitsIn, Type.Null()])),
      response: withErrors({ 200: Type.Object({ redirect: Type.String({ description: 'open it in a browser (this one or any other)' }) }) }, 400, 401, 403, 404, 409, 429),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    const limits = request.body ?? null;
    const redirect = await s.identityProviders.startApproval(request.params.provider, owner.user.id, request.params.txn_id, limits && { expiresIn: limits.expires_in, maxUses: limits.max_uses }, request.ip);
    return { redirect };
  });
}
