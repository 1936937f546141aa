import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { VERIFY_ERROR_CODES } from '@mandate/protocol';
import { AppError } from '../../../domain/errors.ts';
import { failure, type VerifyFailure } from '../../../domain/verification/answers.ts';

export const VerifyFailureOut = Type.Object({
  valid: Type.Literal(false),
  error: Type.Union(VERIFY_ERROR_CODES.map((c) => Type.Literal(c)), { description: 'stable code; match on it' }),
  error_description: Type.String({ description: 'for people; may change' }),
});

export const ERROR_TABLE = `Failure codes (stable, decisions §7):
- \`invalid_request\`: the body is malformed (missing or mistyped field, bad JSON, bad URL).
- \`invalid_token\`: the pass is not a pass of this service (bad signature, unknown \`kid\`, wrong \`typ\`/\`type\`, e.g. a step-up or revocation JWT).
- \`token_expired\`: the pass has expired.
- \`wrong_site\`: the pass was issued for another site.
- \`invalid_dpop\`: the DPoP proof is missing or malformed, or its \`ath\` does not match the pass.
- \`dpop_method_mismatch\` / \`dpop_url_mismatch\`: the proof was made for another method / URL.
- \`dpop_key_mismatch\`: the proof is signed by another key than the one the pass is bound to.
- \`dpop_stale\`: the proof's \`iat\` is more than 120 s away from now.
- \`dpop_replay\`: the proof's \`jti\` was already used (on any node).
- \`agent_revoked\`: the agent was removed or revoked by its owner (effective at once).
- \`grant_revoked\`: the owner revoked this access, or replaced it by a new approval (effective at once).
- \`stepup_invalid\`: the step-up token is not a valid step-up token for this agent, key and person.
- \`stepup_used_or_expired\`: the step-up token was already used or is older than 60 s.
- \`stepup_wrong_action\` / \`stepup_wrong_site\`: it was approved for another action / site.
- \`stepup_wrong_details\`: \`details_digest\` was sent and the step-up was approved for other details, or for none.`;

/**
 * Route error handler of the verify endpoints: they answer 200 even when the body cannot be read
 * (bad JSON, wrong content type, too large). Errors that are not about the request (database
 * down, bugs) are rethrown to the app's handler, so the site sees 503/500 and refuses.
 */
export function verifyErrorHandler(err: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode;
  if (!(err instanceof AppError) && typeof status === 'number' && status >= 400 && status < 500) {
    return reply.code(200).send(failure('invalid_request', `the request body cannot be read: ${err.message}`));
  }
  throw err;
}

/** Ajv's first complaint, as a readable sentence, for `error_description`. */
export function describeValidation(errors: readonly { instancePath: string; message?: string | undefined }[] | undefined | null): string {
  const first = errors?.[0];
  if (!first) return 'the request is malformed';
  const where = first.instancePath ? `body${first.instancePath.replace(/\//g, '.')}` : 'body';
  return `${where} ${first.message ?? 'is invalid'}`;
}

/**
 * Registers one of the verify endpoints (site API, always HTTP 200): a body that does not match
 * `body` is an `invalid_request` answer; anything else goes to `answer`, with the caller's IP.
 */
export function postVerifyEndpoint<In extends TSchema, Ok extends TSchema>(
  app: FastifyInstance,
  route: { url: string; summary: string; description: string; body: In; ok: Ok },
  answer: (body: Static<In>, ip: string) => Promise<Static<Ok> | VerifyFailure>,
): void {
  app.post(route.url, {
    attachValidation: true,
    errorHandler: verifyErrorHandler,
    schema: { summary: route.summary, description: route.description, tags: ['site'], body: route.body, response: { 200: Type.Union([route.ok, VerifyFailureOut]) } },
  }, async (request) => {
    if (request.validationError) return failure('invalid_request', describeValidation(request.validationError.validation));
    // Validated against `route.body` (no validationError); the typed callers see Static<In>, which
    // TypeBox's type provider cannot work out for a generic schema.
    return answer(request.body as Static<In>, request.ip);
  });
}

/** The optional `details_digest` of both verify bodies (decisions §29). */
export const DETAILS_DIGEST_DESCRIPTION = 'with `stepup_token`: base64url SHA-256 (43 characters) of the JCS form of the details the action is for; '
  + 'when given, a step-up approved for other details, or for none, is refused with `stepup_wrong_details` (and not used up). '
  + 'Absent: any details are accepted.';
/** base64url SHA-256: 43 characters, the last carrying 4 bits (as `isDetailsDigest` of @mandate/protocol). */
export const DETAILS_DIGEST_PATTERN = '^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$';
