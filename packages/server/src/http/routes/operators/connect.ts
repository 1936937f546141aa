import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { connectErrorPage, connectPage, type ConnectPage } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { AppError } from '../../../domain/errors.ts';
import { CODE_LIFETIME_MS, DEFAULT_MAX_AGENTS } from '../../../domain/operators/codes.ts';
import { STATE_MAX } from '../../../domain/operators/consent-request.ts';
import { CONSENT_STARTS_PER_MINUTE } from '../../../domain/operators/consent.ts';
import { withErrors } from '../../schemas/common.ts';

const ConsentStartIn = Type.Object({
  operator: Type.String({ maxLength: 64, description: 'the operator id (`op_...`)' }),
  redirect_uri: Type.String({ maxLength: 2000, description: 'one of the operator\'s registered redirect URIs, exactly' }),
  state: Type.Optional(Type.String({ maxLength: STATE_MAX, description: 'echoed to the redirect URI as sent' })),
  code_challenge: Type.Optional(Type.String({ maxLength: 128, description: 'BASE64URL(SHA-256(code_verifier)), 43 characters' })),
  code_challenge_method: Type.Optional(Type.String({ maxLength: 16, description: 'must be `S256`' })),
}, { additionalProperties: false });

const ConsentId = Type.String({ minLength: 1, maxLength: 4000, description: 'from `/api/connect/start`' });
const Redirect = Type.Object({ redirect: Type.String({ description: 'the operator\'s registered redirect URI with the answer in its query: open it' }) });

const AUTH = '401 when not signed in (operator credentials are not a sign-in), 403 for a cookie request from another origin.';
const REFUSED = '400 when the operator\'s redirect_uri is not one it registered, or PKCE is missing or not S256; 404 for an unknown operator; 403 for an operator not switched on. Nothing is ever redirected for those.';

/** A page of the consent flow: HTML, never cached (it reflects the operator's state now). */
function page(reply: FastifyReply, status: number, p: ConnectPage): FastifyReply {
  return reply.code(status).header('content-type', p.type).header('cache-control', 'no-store').send(p.body);
}

/**
 * Consent to an operator (decisions §17): the `/connect` page the operator sends the person to, and
 * the three calls its script makes. Every problem with the link is an error page or a 4xx, never a
 * redirect; the redirect address is answered in JSON only after the person decided.
 */
export async function connectRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/connect', { schema: { hide: true } }, async (request, reply) => {
    try {
      const { operator } = await s.consent.check(request.query as Record<string, unknown>);
      return page(reply, 200, connectPage({ operatorName: operator.name, domain: operator.domain, browser: operator.browser, maxAgents: DEFAULT_MAX_AGENTS }));
    } catch (e) {
      if (e instanceof AppError && e.status < 500) return page(reply, e.status, connectErrorPage(e.detail));
      throw e;
    }
  });

  app.post('/api/connect/start', {
    schema: {
      summary: 'Start consenting to an operator',
      description: `Takes the \`/connect\` link's fields; answers \`consent_id\` and the passkey options that confirm it (valid 10 minutes). ${REFUSED} 403 when you have no passkey: a password session alone cannot connect an operator (add a passkey in the app first). Consenting again while you already have a live connection to that operator gives the operator that same connection (same \`connection_id\`, \`sub\` and agent limit), never a second one. At most ${CONSENT_STARTS_PER_MINUTE} starts per person per minute, then 429 with Retry-After. ${AUTH}`,
      tags: ['operators'],
      body: ConsentStartIn,
      response: withErrors({ 200: Type.Object({ consent_id: Type.String(), options: Type.Unknown({ description: 'PublicKeyCredentialRequestOptionsJSON for navigator.credentials.get' }) }) }, 400, 401, 403, 404, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { consentId, options } = await s.consent.start(user.id, request.body);
    return { consent_id: consentId, options };
  });

  app.post('/api/connect/finish', {
    schema: {
      summary: 'Approve an operator with a passkey',
      description: `\`{consent_id, assertion}\` → \`{redirect}\`: the registered redirect URI with \`code\` (single-use, exchanged within ${CODE_LIFETIME_MS / 1000} s at \`POST /api/v1/operator/token\`), \`state\` (when sent) and \`iss\` (this service's base URL). 400 for a consent that is unknown, expired or another person's; 401 for an assertion that fails (each options' challenge answers once). ${AUTH}`,
      tags: ['operators'],
      body: Type.Object({ consent_id: ConsentId, assertion: Type.Unknown({ description: 'the passkey assertion (AuthenticationResponseJSON)' }) }, { additionalProperties: false }),
      response: withErrors({ 200: Redirect }, 400, 401, 403, 404),
    },
  }, async (request, reply) => {
    const { user } = await s.auth.required(request);
    const redirect = await s.consent.finish(user.id, request.body.consent_id, request.body.assertion, request.ip);
    reply.header('cache-control', 'no-store');
    return { redirect };
  });

  app.post('/api/connect/deny', {
    schema: {
      summary: 'Decline an operator',
      description: `\`{consent_id}\` → \`{redirect}\`: the registered redirect URI with \`error=access_denied\`, \`state\` (when sent) and \`iss\`. 400 for a consent that is unknown, expired or another person's. ${AUTH}`,
      tags: ['operators'],
      body: Type.Object({ consent_id: ConsentId }, { additionalProperties: false }),
      response: withErrors({ 200: Redirect }, 400, 401, 403, 404),
    },
  }, async (request, reply) => {
    const { user } = await s.auth.required(request);
    const redirect = await s.consent.deny(user.id, request.body.consent_id, request.ip);
    reply.header('cache-control', 'no-store');
    return { redirect };
  });
}
