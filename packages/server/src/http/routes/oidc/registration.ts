/**
 * POST /oidc/register: RFC 7591 dynamic registration of public clients (decisions §28). Registered
 * inside the provider's scope, whose error handler answers OAuthErrors as `{error, error_description}`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { AppError } from '../../../domain/errors.ts';
import { OAuthError } from '../../../domain/oidc/oauth-error.ts';
import { REGISTRATION_LIMIT } from '../../../domain/oidc/registration.ts';
import { describeValidation } from '../site-api/verify-answers.ts';

export const REGISTRATION_PATH = '/oidc/register';

const uri = (description: string) => Type.String({ maxLength: 2000, description });

const RegistrationIn = Type.Object({
  redirect_uris: Type.Array(Type.String({ maxLength: 2000 }), { minItems: 1, maxItems: 10, description: '1 to 10 redirect URIs, compared exactly: https:, or http: on a loopback host (localhost, 127.0.0.1, [::1], any port) for native apps (RFC 8252); no fragment, no wildcard' }),
  client_name: Type.Optional(Type.String({ maxLength: 200, description: 'what the owner sees (1 to 100 characters, trimmed); "Unnamed app" when absent' })),
  token_endpoint_auth_method: Type.Optional(Type.String({ description: '"none" (also when absent): public clients only' })),
  grant_types: Type.Optional(Type.Array(Type.String(), { description: 'a subset of authorization_code, refresh_token' })),
  response_types: Type.Optional(Type.Array(Type.String(), { description: 'only "code"' })),
  client_uri: Type.Optional(uri('an https: URL shown to the owner, never fetched')),
  logo_uri: Type.Optional(uri('an https: URL, never fetched by the service')),
}, { additionalProperties: true });

const RegisteredOut = Type.Object({
  client_id: Type.String({ description: '`rc_…`; there is no secret' }),
  client_id_issued_at: Type.Integer(),
  client_name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  token_endpoint_auth_method: Type.Literal('none'),
  grant_types: Type.Array(Type.String()),
  response_types: Type.Array(Type.String()),
  client_uri: Type.Optional(Type.String()),
  logo_uri: Type.Optional(Type.String()),
});

const DESCRIPTION = `RFC 7591 dynamic client registration, for public clients only (MCP clients, native and browser apps): PKCE S256 is their proof. `
  + `201 with the client's metadata and \`client_id\`, no secret. 400 \`invalid_redirect_uri\` for bad redirect URIs, \`invalid_client_metadata\` for anything else `
  + `(a \`token_endpoint_auth_method\` other than \`none\`, other grant or response types, a bad name or link). `
  + `429 \`rate_limited\` with Retry-After past ${REGISTRATION_LIMIT.perAddress} registrations an hour from one address (IPv4 address or IPv6 /64; ${REGISTRATION_LIMIT.perNetwork} per IPv6 /48). `
  + 'A client may instead use the https URL of its Client ID Metadata Document as its client_id, without registering.';

export function registrationRoute(scope: FastifyInstance, s: Services): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.post(REGISTRATION_PATH, {
    attachValidation: true,
    // A body Fastify cannot read (not JSON, another content type) is RFC 7591's error too; the
    // scope's handler writes it as `{error, error_description}`.
    errorHandler: (err, _request, _reply) => {
      const status = (err as { statusCode?: unknown }).statusCode;
      if (!(err instanceof AppError) && typeof status === 'number' && status >= 400 && status < 500) {
        throw new OAuthError('invalid_client_metadata', status === 415 ? 'send the client metadata as application/json' : 'the body must be a JSON object of client metadata (RFC 7591)');
      }
      throw err;
    },
    schema: { summary: 'Register a public client (RFC 7591)', description: DESCRIPTION, tags: ['oidc'], body: RegistrationIn, response: { 201: RegisteredOut } },
  }, async (request, reply) => {
    if (request.validationError) {
      const field = request.validationError.validation?.[0]?.instancePath ?? '';
      throw new OAuthError(field.startsWith('/redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata', describeValidation(request.validationError.validation));
    }
    const answer = await s.oidc.register(request.body, request.ip);
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
  });
}
