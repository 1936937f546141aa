import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso } from '../../../clock.ts';
import { MAX_OPERATORS_PER_PERSON, OPERATOR_NAME_MAX } from '../../../domain/operators/registration.ts';
import { OPERATOR_LIMITS } from '../../../domain/operators/operators.ts';
import { IdParam, Timestamp, withErrors } from '../../schemas/common.ts';
import { OperatorOut, operatorOut } from './operator-out.ts';

const OperatorIn = Type.Object({
  name: Type.String({ minLength: 1, maxLength: OPERATOR_NAME_MAX, description: `what people see when they connect the operator; 1 to ${OPERATOR_NAME_MAX} characters` }),
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
    minItems: 1,
    maxItems: 10,
    description: '1 to 10 distinct absolute URLs on ONE host (the operator\'s domain), same scheme and port: https:, or http: on loopback only where the service runs with OUTBOUND_ALLOW_LOOPBACK (development); no fragment, no wildcard',
  }),
  browser: Type.Union([Type.Literal('operator'), Type.Literal('user')], { description: '`operator`: the agents\' browser runs on your computers; `user`: on the user\'s own machine' }),
}, { additionalProperties: false });

const Oid = IdParam('oid', 'op');
const NOT_FOUND = '404 for an unknown id or another person\'s operator.';
const AUTH = '401 when not signed in (operator credentials are not a sign-in), 403 for a cookie request from another origin.';

export async function ownerOperatorRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/operators', {
    schema: {
      summary: 'Your operators',
      description: `The operators you registered, oldest first. Secrets are never shown again. ${AUTH}`,
      tags: ['operators'],
      response: withErrors({ 200: Type.Array(OperatorOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return (await s.operators.list(user.id)).map(operatorOut);
  });

  app.post('/api/operators', {
    schema: {
      summary: 'Register an operator',
      description: `Registers a company that creates agents for many users; it starts \`pending\`. Answers the operator with \`secret\` (shown this once, stored as a hash; the operator API takes HTTP Basic \`op_id:secret\`) and \`verification\`: publish \`verification.line\` at \`verification.url\`, then call \`POST /api/operators/{oid}/verify\`; an admin can switch a verified operator on. 400 for redirect URIs on more than one host or scheme, not https: (http: on loopback only with OUTBOUND_ALLOW_LOOPBACK), with a fragment or wildcard, or repeated; a blank or unreadable name. 422 for missing or unknown fields and wrong types or lengths. 409 past ${MAX_OPERATORS_PER_PERSON} operators per person. 429 past ${OPERATOR_LIMITS.registrationsPerHour} registrations per hour. ${AUTH}`,
      tags: ['operators'],
      body: OperatorIn,
      response: withErrors({ 200: Type.Composite([OperatorOut, Type.Object({ secret: Type.String({ description: 'shown this once' }) })]) }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const b = request.body;
    const { view, secret } = await s.operators.register(user.id, { name: b.name, redirectUris: b.redirect_uris, browser: b.browser }, request.ip);
    return { ...operatorOut(view), secret };
  });

  app.post('/api/operators/:oid/secret', {
    schema: {
      summary: "Rotate an operator's secret",
      description: `Answers the new secret, shown this once; the old one stops working at once. ${NOT_FOUND} ${AUTH}`,
      tags: ['operators'],
      params: Oid,
      response: withErrors({ 200: Type.Object({ id: Type.String(), secret: Type.String(), secret_set_at: Timestamp }) }, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { secret, setAt } = await s.operators.rotateSecret(user.id, request.params.oid, request.ip);
    return { id: request.params.oid, secret, secret_set_at: iso(setAt) };
  });

  app.post('/api/operators/:oid/verify', {
    schema: {
      summary: "Verify an operator's domain",
      description: `Fetches \`verification.url\` through the outbound guard (https:, public addresses only, no redirects followed, 5 s, 64 kB) and looks for \`verification.line\` on a line of its own. 200 \`{verified: true, verified_at}\` when it is there. 400 otherwise, with \`detail\` naming what was found (the status, the size, lines for this or other operators) and the line to publish, plus \`url\`, \`line\` and \`found\`; a failed check changes nothing. 429 past ${OPERATOR_LIMITS.verificationsPerHour} checks per hour. ${NOT_FOUND} ${AUTH}`,
      tags: ['operators'],
      params: Oid,
      response: withErrors({ 200: Type.Object({ id: Type.String(), verified: Type.Literal(true), verified_at: Timestamp }) }, 400, 401, 403, 404, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const operator = await s.operators.verify(user.id, request.params.oid, request.ip);
    return { id: operator.id, verified: true as const, verified_at: iso(operator.verifiedAt ?? operator.updatedAt) }; // markVerified set both to the same moment
  });
}
