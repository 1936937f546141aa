/**
 * The OIDC provider's endpoints (decisions §12, §18; interface "OIDC-style endpoints"): discovery,
 * keys, authorize (with the agent header), the wait address, token, revoke, introspect, userinfo,
 * registration (registration.ts). Registered in their own scope: form bodies are parsed here only,
 * and token/userinfo/registration errors are RFC 6749 JSON (`{error, error_description}`,
 * `Cache-Control: no-store`), with the house's `detail` beside them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { OAuthError } from '../../../domain/oidc/oauth-error.ts';
import { SUPPORTED_SCOPES } from '../../../domain/oidc/deps.ts';
import { CIBA_GRANT_TYPE } from '../../../domain/oidc/ciba.ts';
import { AppError } from '../../../domain/errors.ts';
import { JwksOut } from '../site-api/jwks.ts';
import { REGISTRATION_PATH, registrationRoute } from './registration.ts';
import { params } from './params.ts';
import { appConsentRoutes, browserAuthorizePage } from './app-consent.ts';

const FORM = 'application/x-www-form-urlencoded';
/** A browser's form post to /oidc/authorize becomes a GET of the page: its form, as the query, at most this long. */
const BROWSER_FORM_MAX = 12_000;


function formOf(body: unknown): URLSearchParams {
  if (typeof body === 'string') return new URLSearchParams(body);
  if (body === undefined || body === null) return new URLSearchParams();
  throw new OAuthError('invalid_request', `send the parameters as ${FORM}`);
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const noStore = (reply: FastifyReply): FastifyReply => reply.header('cache-control', 'no-store').header('pragma', 'no-cache');

const WaitParams = Type.Object({ txn: Type.String({ maxLength: 64, description: 'the access request behind the sign-in (`t_`)' }) });
const WaitQuery = Type.Object({ k: Type.String({ default: '', maxLength: 4000, description: 'the secret of the authorize call, from its redirect' }) });

export async function oidcProviderRoutes(base: FastifyInstance, s: Services): Promise<void> {
  // The consent page's calls are the owner's API (house errors, the session), outside the OAuth scope.
  await appConsentRoutes(base, s);
  await base.register(async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    const issuer = s.oidc.issuer;
    scope.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => done(null, body));
    scope.setErrorHandler((err, _request, reply) => {
      if (err instanceof OAuthError) return noStore(reply).code(err.status).headers(err.headers).send({ error: err.error, error_description: err.detail, detail: err.detail });
      // A rate limit or quota at these endpoints reads as an OAuth error too, with its Retry-After and
      // the fields every other 429 of the service carries (retry_after, and quota where one applies).
      if (err instanceof AppError && err.status === 429) return noStore(reply).code(429).headers(err.headers).send({ ...err.extra, error: 'rate_limited', error_description: err.detail, detail: err.detail });
      throw err;
    });

    const discovery = () => ({
      issuer,
      authorization_endpoint: `${issuer}/oidc/authorize`,
      token_endpoint: `${issuer}/oidc/token`,
      userinfo_endpoint: `${issuer}/oidc/userinfo`,
      backchannel_authentication_endpoint: `${issuer}/oidc/bc-authorize`,
      backchannel_token_delivery_modes_supported: ['poll'],
      backchannel_user_code_parameter_supported: false,
      jwks_uri: `${issuer}/oidc/jwks`,
      revocation_endpoint: `${issuer}/oidc/revoke`,
      introspection_endpoint: `${issuer}/oidc/introspect`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [...SUPPORTED_SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', CIBA_GRANT_TYPE],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['ES256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      // MCP clients (decisions §28): a client_id may be the https URL of the client's metadata
      // document, or a public client registers itself (RFC 7591).
      client_id_metadata_document_supported: true,
      registration_endpoint: `${issuer}${REGISTRATION_PATH}`,
      claims_supported: ['iss', 'aud', 'sub', 'exp', 'iat', 'auth_time', 'nonce', 'amr', 'sid', 'act', 'name', 'email', 'email_verified', 'phone_number', 'phone_number_verified'],
      dpop_signing_alg_values_supported: ['ES256'],
      prompt_values_supported: ['none', 'login', 'consent'],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      // Revoking the grant or removing the agent ends the sign-in and POSTs a logout_token to the
      // client's backchannel_logout_uri (domain/oidc/sign-in-end.ts).
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      app.get(path, { schema: { summary: path.endsWith('openid-configuration') ? 'OIDC discovery' : 'Authorization server metadata (RFC 8414), the same document', tags: ['oidc'] } }, async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return discovery();
      });
    }

    registrationRoute(scope, s);

    app.get('/oidc/jwks', {
      schema: { summary: 'Keys that sign ID tokens and access tokens (the same as /api/v1/jwks)', tags: ['oidc'], response: { 200: JwksOut } },
    }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return s.keys.jwks();
    });

    const authorizeDescription = 'Code flow with PKCE S256 (plain is refused). `client_id`: an owner\'s client (`c_…`), a self-registered one (`rc_…`, POST /oidc/register), or the https URL of the client\'s metadata document (fetched through the outbound guard, a JSON object naming itself with `client_name` and `redirect_uris`, for a public client; kept per its Cache-Control, 60 s to 24 h; a refusal kept 60 s; new documents fetched at most 30 times a minute per host and caller address). 400 (no redirect) for an unknown client or a refused metadata document (with `error` `invalid_client`) and for an unregistered redirect_uri; other request errors redirect to the redirect URI with `error`, `state` and `iss`.\n\n**An agent** proves itself with header `X-Service-Agent` (or `X-AuthYourAgent-Agent`): an agent JWT with `htu` = this URL as requested, a one-time `jti`, at most 60 s of life. 302 to the client with `code` when a live grant covers the sign-in, else to `/oidc/authorize/wait/{txn}?k=...` while the owner decides; 401 for a refused agent header.\n\n**A person\'s browser** (no agent header; decisions §28): `resource` (RFC 8707), an absolute http(s) URL without fragment, is required unless the request is a plain sign-in (scopes only `openid`, `profile`, `email`, `phone`, with `openid`); `scope` then holds the resource server\'s own scopes (each 1 to 64 of a-z 0-9 _ : . -, at most 20; `invalid_scope` otherwise; a bad resource is `invalid_target`). 200: the consent page (HTML), where the signed-in owner approves with a passkey (POST /api/oidc/consent/*); it then continues to the redirect URI with `code`, `state` and `iss`, or `error=access_denied`. Errors before the redirect URI is known good are an HTML page with the status (400, or 429 with Retry-After). `prompt=none` redirects with `consent_required`.';
    const agentHeader = (request: FastifyRequest) => header(request, 'x-service-agent') ?? header(request, 'x-authyouragent-agent');

    app.get('/oidc/authorize', { schema: { summary: 'Authorization endpoint', description: authorizeDescription, tags: ['oidc'] } }, async (request, reply) => {
      const url = new URL(request.url, issuer);
      if (agentHeader(request) === undefined) return browserAuthorizePage(s, reply, url.searchParams, request.ip);
      const { map, repeated } = params(url.searchParams);
      const location = await s.oidc.authorize({ params: map, repeated, agentHeader: agentHeader(request), requested: { method: 'GET', url }, ip: request.ip });
      return noStore(reply).redirect(location, 302);
    });

    app.post('/oidc/authorize', { schema: { summary: 'Authorization endpoint (form post)', description: `${authorizeDescription} With POST the htu names the endpoint with all form parameters as its query.`, tags: ['oidc'] } }, async (request, reply) => {
      let form: URLSearchParams;
      try {
        form = formOf(request.body);
      } catch {
        return reply.code(400).send({ detail: `send the parameters as ${FORM}` });
      }
      // A browser's form post: the consent page is read from the address (its script reads the query).
      // Longer than six parameters of the longest allowed cannot be an authorization request, and
      // would make a Location header many clients refuse.
      if (agentHeader(request) === undefined) {
        const query = form.toString();
        if (query.length > BROWSER_FORM_MAX) return reply.code(400).send({ detail: `an authorization request from a browser is at most ${BROWSER_FORM_MAX} characters` });
        return noStore(reply).redirect(`/oidc/authorize?${query}`, 303);
      }
      const { map, repeated } = params(form);
      const url = new URL('/oidc/authorize', issuer);
      const location = await s.oidc.authorize({ params: map, repeated, agentHeader: agentHeader(request), requested: { method: 'POST', url, form: [...form] }, ip: request.ip });
      return noStore(reply).redirect(location, 302);
    });

    app.get('/oidc/authorize/wait/:txn/status', {
      schema: {
        summary: 'Whether the owner has answered a sign-in',
        description: '`{status: "pending"}` while the owner decides, then `{redirect}`: the client address with `code` (approved) or `error=access_denied`. 404 without the right `k`.',
        tags: ['oidc'], params: WaitParams, querystring: WaitQuery,
      },
    }, async (request, reply) => {
      const answer = await s.oidc.waitStatus(request.params.txn, request.query.k);
      return noStore(reply).send(answer);
    });

    app.get('/oidc/authorize/wait/:txn', {
      schema: { summary: 'A page that waits for the owner, then continues to the client', tags: ['oidc'], params: WaitParams, querystring: WaitQuery },
    }, async (request, reply) => {
      const answer = await s.oidc.waitStatus(request.params.txn, request.query.k);
      if ('redirect' in answer) return noStore(reply).redirect(answer.redirect, 302);
      return noStore(reply).header('refresh', '3').type('text/html; charset=utf-8').send(
        '<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="3"><title>Waiting for approval</title></head>' +
          '<body><p>Waiting for the owner to approve this sign-in with their passkey. This page continues by itself.</p></body></html>',
      );
    });

    app.post('/oidc/token', {
      schema: { summary: 'Token endpoint', description: 'authorization_code (with PKCE), refresh_token (rotating; a rotated token presented again ends the sign-in) and the CIBA grant (`urn:openid:params:grant-type:ciba`). Client authentication: client_secret_basic, client_secret_post, or none for a public client (an owner\'s public client, a self-registered client, or a metadata document URL as client_id). With a `DPoP` proof (RFC 9449: `htm` POST, `htu` this endpoint, no `ath`) the access token is bound to its key (`cnf.jkt`, `token_type: DPoP`), and so is the sign-in: its refreshes need a proof of the same key. A code asked for with `dpop_jkt` needs a proof of that key. **Protected resources** (decisions §28): a code a person\'s browser got with `resource` (RFC 8707) starts a sign-in for that resource; `resource`, when sent again (code or refresh), must be exactly it, else `invalid_target`. Its `access_token` is a resource pass: JWT `typ at+jwt`, `aud` = the resource URL exactly, `sub` the app\'s agent id, `user`, `scope` (array), `client_id`, `grant`, `rev_seq`, `jti`, `type: access`, and `cnf: {dpop, jkt}` only when the token request carried a DPoP proof (then `token_type: DPoP`, else `Bearer`); 10 minutes, less when the grant ends sooner (`expires_in` says). Each pass spends one of the grant\'s uses; none left, the grant expired or revoked, or the app removed: `invalid_grant`, and the sign-in ends. The answer has `id_token` only when `openid` is among the scopes. Refresh tokens rotate (a rotated one presented again ends the sign-in), the sign-in lives 30 days at most and keeps its resource and DPoP key. Verify such passes with POST /api/v1/verify and `resource`. Errors are RFC 6749 JSON; 429 `rate_limited` past 60 refreshes a minute of one sign-in, or 60 passes a minute of one app for one resource.', tags: ['oidc'] },
    }, async (request, reply) => {
      const { map, repeated } = params(formOf(request.body));
      const answer = await s.oidc.token({ authorization: header(request, 'authorization'), form: map, repeated, dpop: header(request, 'dpop') });
      return noStore(reply).send(answer);
    });

    app.post('/oidc/bc-authorize', {
      schema: {
        summary: 'Backchannel authentication (CIBA, poll mode)',
        description: 'For a confidential client. Form: `scope` (with `openid`), `login_hint` = the agent\'s `act.sub` from an ID token this very client received (a value given to another client, even on the same host, is unknown), optional `binding_message` (at most 100 characters, no control or invisible formatting characters, shown to the owner as written), optional `requested_expiry` (seconds; default 300, raised to at least 60, lowered to at most 600). Answers `{auth_req_id, expires_in, interval: 5}`; then poll /oidc/token with `grant_type=urn:openid:params:grant-type:ciba` and `auth_req_id`: `authorization_pending`, `slow_down` (+5 s to the interval each time you poll faster), `access_denied`, `expired_token`, then the tokens once. Errors: `unknown_user_id` (not given to this client, or forgotten since the owner revoked the grant or removed the agent), `access_denied` (no live grant with `openid` at the site), `invalid_binding_message`, `invalid_scope`, `invalid_request` (one request of the agent at the site already waits), `unauthorized_client` (a public client), `invalid_client`; 429 `rate_limited` past 30 requests a minute of a client, or (`quota: ciba_requests_per_hour`) 10 an hour of a client for one agent or 60 an hour to one owner. A refused request files nothing and notifies nobody.',
        tags: ['oidc'],
      },
    }, async (request, reply) => {
      const { map, repeated } = params(formOf(request.body));
      return noStore(reply).send(await s.oidc.bcAuthorize(header(request, 'authorization'), map, repeated, request.ip));
    });

    app.post('/oidc/revoke', {
      schema: { summary: 'Revoke a token (RFC 7009)', description: 'A refresh or access token of a live sign-in of the authenticated client ends that whole sign-in. Always 200: an unknown token, another client\'s (left untouched) or failed client authentication change nothing.', tags: ['oidc'] },
    }, async (request, reply) => {
      let form: URLSearchParams;
      try {
        form = formOf(request.body);
      } catch {
        return noStore(reply).code(200).send({});
      }
      const { map, repeated } = params(form);
      await s.oidc.revoke(header(request, 'authorization'), map, repeated);
      return noStore(reply).code(200).send({});
    });

    app.post('/oidc/introspect', {
      schema: { summary: 'Introspect a token (RFC 7662)', description: 'For a confidential client. `{active: true, sub, act, scope, client_id, exp, iat, token_type}` for a live token of one of its sign-ins; `{active: false}` for anything not live, not ours, or issued to another client.', tags: ['oidc'] },
    }, async (request, reply) => {
      const { map, repeated } = params(formOf(request.body));
      return noStore(reply).send(await s.oidc.introspect(header(request, 'authorization'), map, repeated));
    });

    const userinfo = (method: 'GET' | 'POST') => async (request: FastifyRequest, reply: FastifyReply) =>
      noStore(reply).send(await s.oidc.userinfo({ authorization: header(request, 'authorization'), dpop: header(request, 'dpop'), method }));
    const userinfoDescription = '`sub`, `act`, `name`, and `email` / `phone_number` when the sign-in\'s scopes and the owner\'s approval release them. The access token as `Authorization: Bearer <token>`, or, for a DPoP-bound token, `Authorization: DPoP <token>` with a `DPoP` proof (`ath`, `htm`, `htu` of this endpoint).';
    app.get('/oidc/userinfo', { schema: { summary: 'UserInfo', description: userinfoDescription, tags: ['oidc'] } }, userinfo('GET'));
    app.post('/oidc/userinfo', { schema: { summary: 'UserInfo (POST)', description: userinfoDescription, tags: ['oidc'] } }, userinfo('POST'));
  });
}
