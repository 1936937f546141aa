/**
 * A person's browser at /oidc/authorize (decisions §28): the consent page, and the three calls its
 * script makes with the person's session (start, approve with the passkey, deny). Modelled on the
 * operator consent (/connect, routes/operators/connect.ts): every problem before the redirect URI is
 * known good is an error page, never a redirect; the redirect address is answered in JSON only after
 * the person decided, and the page opens it.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { appConsentErrorPage, appConsentPage, type ConnectPage } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { AppError } from '../../../domain/errors.ts';
import { APP_CONSENT_LIFETIME_MS, APP_CONSENT_STARTS_PER_MINUTE } from '../../../domain/oidc/authorize-consent.ts';
import { CODE_LIFETIME_MS } from '../../../domain/oidc/deps.ts';
import { withErrors } from '../../schemas/common.ts';
import { params } from './params.ts';

/** A page of the consent flow: HTML, never cached (it reflects the request and the client now). */
function page(reply: FastifyReply, status: number, p: ConnectPage, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers(headers).header('content-type', p.type).header('cache-control', 'no-store').send(p.body);
}

/** GET /oidc/authorize without the agent header: the consent page, an error redirect to the listed redirect URI, or an error page. */
export async function browserAuthorizePage(s: Services, reply: FastifyReply, query: URLSearchParams, ip: string): Promise<FastifyReply> {
  const { map, repeated } = params(query);
  try {
    const answer = await s.appConsent.authorize(map, repeated, ip);
    if (answer.kind === 'redirect') return reply.header('cache-control', 'no-store').redirect(answer.location, 302);
    return page(reply, 200, appConsentPage(answer.view));
  } catch (e) {
    if (e instanceof AppError && e.status < 500) return page(reply, e.status, appConsentErrorPage(e.detail), e.headers);
    throw e;
  }
}

const ConsentId = Type.String({ minLength: 1, maxLength: 40_000, description: 'from `/api/oidc/consent/start`' });
const Redirect = Type.Object({ redirect: Type.String({ description: 'the app\'s redirect URI with the answer in its query: open it' }) });
const AUTH = '401 when not signed in, 403 for a cookie request from another origin.';

export async function appConsentRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/oidc/consent/start', {
    schema: {
      summary: 'Start approving an app (the consent page of /oidc/authorize)',
      description: `\`{authorize}\`: the query of the /oidc/authorize address the page was opened at (without \`?\`), checked again as /oidc/authorize checks it. Answers \`consent_id\` (bound to you, valid ${APP_CONSENT_LIFETIME_MS / 60_000} minutes, answered once) and the passkey options that approve it. 400 for a request /oidc/authorize would refuse (unknown client, unlisted redirect_uri, bad PKCE, resource or scope); 403 when you have no passkey (a password session alone cannot approve an app); at most ${APP_CONSENT_STARTS_PER_MINUTE} starts per person per minute, then 429. ${AUTH}`,
      tags: ['oidc'],
      body: Type.Object({ authorize: Type.String({ maxLength: 64_000, description: 'the authorize query string' }) }, { additionalProperties: false }),
      response: withErrors({ 200: Type.Object({ consent_id: Type.String(), options: Type.Unknown({ description: 'PublicKeyCredentialRequestOptionsJSON for navigator.credentials.get' }) }) }, 400, 401, 403, 429),
    },
  }, async (request, reply) => {
    const { user } = await s.auth.required(request);
    const { map, repeated } = params(new URLSearchParams(request.body.authorize));
    const { consentId, options } = await s.appConsent.start(user.id, map, repeated, request.ip);
    reply.header('cache-control', 'no-store');
    return { consent_id: consentId, options };
  });

  app.post('/api/oidc/consent/approve', {
    schema: {
      summary: 'Approve an app with a passkey',
      description: `\`{consent_id, assertion}\` → \`{redirect}\`: the app's redirect URI with \`code\` (single-use, ${CODE_LIFETIME_MS / 1000} s, exchanged at /oidc/token with the PKCE verifier), \`state\` (when sent) and \`iss\`. The first approval of an app (client_id) creates an agent of kind \`app\` (no key), later ones reuse it; each approval gives a fresh grant for the resource (site = its host). 400 for a consent that is unknown, expired, answered already or another person's, or whose app no longer lists the redirect URI; 401 for an assertion that fails (each options' challenge answers once); 409 when you blocked the app (unblock or remove it first) or are at the agent limit. ${AUTH}`,
      tags: ['oidc'],
      body: Type.Object({ consent_id: ConsentId, assertion: Type.Unknown({ description: 'the passkey assertion (AuthenticationResponseJSON)' }) }, { additionalProperties: false }),
      response: withErrors({ 200: Redirect }, 400, 401, 403, 409),
    },
  }, async (request, reply) => {
    const { user } = await s.auth.required(request);
    const redirect = await s.appConsent.approve(user.id, request.body.consent_id, request.body.assertion, request.ip);
    reply.header('cache-control', 'no-store');
    return { redirect };
  });

  app.post('/api/oidc/consent/deny', {
    schema: {
      summary: 'Decline an app',
      description: `\`{consent_id}\` → \`{redirect}\`: the app's redirect URI with \`error=access_denied\`, \`state\` (when sent) and \`iss\`. 400 for a consent that is unknown, expired, answered already or another person's. ${AUTH}`,
      tags: ['oidc'],
      body: Type.Object({ consent_id: ConsentId }, { additionalProperties: false }),
      response: withErrors({ 200: Redirect }, 400, 401, 403),
    },
  }, async (request, reply) => {
    const { user } = await s.auth.required(request);
    const redirect = await s.appConsent.deny(user.id, request.body.consent_id, request.ip);
    reply.header('cache-control', 'no-store');
    return { redirect };
  });
}
