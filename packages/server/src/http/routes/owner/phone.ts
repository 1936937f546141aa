import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { PHONE_CODE, PHONE_SEND_LIMIT } from '../../../domain/phone/phone.ts';
import { withErrors } from '../../schemas/common.ts';

const PhoneField = Type.String({ minLength: 1, maxLength: 40, description: 'a full international number with its country code, e.g. `+1 415 555 0123` (spaces, dashes and brackets are fine; normalised to E.164)' });
const Masked = Type.String({ description: 'the number, masked: country code and last four digits, e.g. `+1 ••• ••• 0123`' });

/** The owner's phone (decisions §14): text a code, verify it, unlink. */
export async function phoneRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/phone/send', {
    schema: {
      summary: 'Text a verification code to a phone number',
      description: `Sends a ${PHONE_CODE.digits}-digit code by SMS (SMS_PROVIDER; without one, the service writes it to its log: development), valid ${PHONE_CODE.lifetimeSec / 60} minutes and for ${PHONE_CODE.attempts} tries; a new code voids the previous one. The number becomes the account's phone only once verified (POST /api/phone/verify). 400 with \`detail\` for a number that is not a valid international one; 409 when it is already the verified phone; at most ${PHONE_SEND_LIMIT.perAccount} codes per account per hour (429 with \`retry_after\`).`,
      tags: ['owner'],
      body: Type.Object({ phone: PhoneField }),
      response: withErrors({ 200: Type.Object({ sent: Type.Literal(true), phone: Masked, expires_in: Type.Integer({ description: `seconds the code stays valid: ${PHONE_CODE.lifetimeSec}` }) }) }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return s.phone.send(user, request.body.phone, request.ip);
  });

  app.post('/api/phone/verify', {
    schema: {
      summary: 'Verify a phone number with its texted code',
      description: `The number and the code of POST /api/phone/send. The right code makes the number the account's verified phone (\`phone_verified\` in /api/me): \`user:phone\` can then be offered to sites, and the phone can recover the account. Each call uses one of the code's ${PHONE_CODE.attempts} tries; a wrong code: 400 saying how many are left, then the code is void; no code waiting for that number (expired, used up, or never sent): 400 with \`next_step\`. A security notice goes to the inbox.`,
      tags: ['owner'],
      body: Type.Object({ phone: PhoneField, code: Type.String({ minLength: 1, maxLength: 20, description: `the ${PHONE_CODE.digits}-digit code from the SMS` }) }),
      response: withErrors({ 200: Type.Object({ phone_verified: Type.Literal(true), phone: Masked }) }, 400, 401, 403),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return s.phone.verify(user, request.body.phone, request.body.code.trim(), request.ip);
  });

  app.delete('/api/phone', {
    schema: {
      summary: "Remove the owner's phone",
      description: 'The phone stops being the account\'s at once: `user:phone` is no longer offered, and the next pass, verify answer and OIDC userinfo of any grant carry no phone (passes already issued keep theirs until they expire, at most 10 minutes); it can no longer recover the account; waiting codes end. Answers the same when there is no phone. A security notice goes to the inbox.',
      tags: ['owner'],
      response: withErrors({ 200: Type.Object({ phone: Type.Null(), phone_verified: Type.Literal(false) }) }, 401, 403),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return s.phone.unlink(user, request.ip);
  });
}
