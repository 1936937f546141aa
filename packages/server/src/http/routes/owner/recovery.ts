import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { PHONE_CODE } from '../../../domain/phone/phone.ts';
import { RECOVERY_CODES, RECOVERY_COMPLETE_LIMIT, RECOVERY_START_LIMIT } from '../../../domain/recovery/recovery.ts';
import { Email, withErrors } from '../../schemas/common.ts';
import { SignedInOut, signedInOut } from './user-out.ts';

/** Account recovery (decisions §14): one-time recovery codes, and recovering with them and an SMS code. */
export async function recoveryRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/recovery/codes', {
    schema: {
      summary: 'Make new one-time recovery codes',
      description: `Answers ${RECOVERY_CODES.count} new codes of ${RECOVERY_CODES.length} base32 characters (shown in groups of four: case, spaces and dashes do not matter when typed). They are shown this once (only their hashes are kept); each works once; making new ones voids every old one. Once the account has a passkey this needs a session made with one (403 with \`next_step\` otherwise); before, any session. Body: none or \`{}\`. A security notice goes to the inbox.`,
      tags: ['owner'],
      response: withErrors({ 200: Type.Object({ codes: Type.Array(Type.String(), { minItems: RECOVERY_CODES.count, maxItems: RECOVERY_CODES.count }) }) }, 401, 403),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    return s.recovery.generate(owner, request.ip);
  });

  app.post('/api/recovery/start', {
    schema: {
      summary: 'Start recovering an account: text a code to its verified phone',
      description: `For an owner who lost their passkeys. When the email is an account's and the phone is that account's verified phone, a ${PHONE_CODE.digits}-digit code is texted to it (valid ${PHONE_CODE.lifetimeSec / 60} minutes, ${PHONE_CODE.attempts} tries); the answer is \`{sent: true}\` either way, in about the same time, so it says nothing about the account. No session needed. A phone that is not a valid international number: 400. At most ${RECOVERY_START_LIMIT.perAddress} starts per client address, and ${RECOVERY_START_LIMIT.perAccount} per email address and per phone number, per hour (429 with Retry-After). Then POST /api/recovery/complete.`,
      tags: ['owner'],
      body: Type.Object({ email: Email, phone: Type.String({ minLength: 1, maxLength: 40, description: 'the account\'s verified phone, with its country code' }) }),
      response: withErrors({ 200: Type.Object({ sent: Type.Literal(true) }) }, 400, 429),
    },
  }, async (request) => s.recovery.start(request.body, request.ip));

  app.post('/api/recovery/complete', {
    schema: {
      summary: 'Recover an account with the texted code and a recovery code',
      description: `The texted code of POST /api/recovery/start, one unused recovery code and a new password (at least 8 characters). On success: the password is set, every session and every passkey of the account is removed, every linked identity provider is unlinked (it signs in and approves on its own), the recovery code is used up, and the answer signs in (cookie and \`session_token\`) with a \`recovery\` session, which may add a new passkey (do so at once) but approves nothing without one. Any wrong part: 401 with one detail that does not say which; each call uses one of the start's ${PHONE_CODE.attempts} tries and is recorded in Activity (\`recovery.failed\`, with the tries left), then the start is void (start again). At most ${RECOVERY_COMPLETE_LIMIT.perAddress} calls per client address per hour (429 with Retry-After). Activity and the inbox record the recovery.`,
      tags: ['owner'],
      body: Type.Object({
        email: Email,
        sms_code: Type.String({ minLength: 1, maxLength: 20, description: 'the code from the SMS' }),
        recovery_code: Type.String({ minLength: 1, maxLength: 64, description: 'one of the account\'s recovery codes' }),
        new_password: Type.String({ minLength: 8, maxLength: 1024, description: 'at least 8 characters' }),
      }),
      response: withErrors({ 200: SignedInOut }, 401, 429),
    },
  }, async (request, reply) => {
    const signedIn = await s.recovery.complete(request.body, request.ip);
    s.auth.signIn(reply, signedIn);
    return signedInOut(s.accounts, signedIn);
  });
}
