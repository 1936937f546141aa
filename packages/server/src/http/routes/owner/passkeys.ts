import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PasskeyRecord } from '../../../store/ports.ts';
import type { Services } from '../../../services.ts';
import { SignedInOut, signedInOut } from './user-out.ts';
import { iso, isoOrNull } from '../../../domain/clock.ts';
import { Email, IdParam, Timestamp, withErrors } from '../../schemas/common.ts';

// WebAuthn JSON is what @simplewebauthn/browser produces; its inner shape is checked by the domain
// (malformed or forged credentials are a 400/401 there, not a 422 here).
const WebAuthnJson = (description: string) => Type.Object({}, { additionalProperties: true, description });
const Challenge = Type.String({ minLength: 1, maxLength: 200, description: 'the `challenge` of the options this answers' });

const CeremonyOut = (what: string) => Type.Object({
  challenge: Type.String({ description: 'single-use, 5 minutes; send it back with the answer' }),
  options: WebAuthnJson(`pass as \`optionsJSON\` to @simplewebauthn/browser \`${what}\``),
});

const RegisterIn = Type.Object({
  challenge: Challenge,
  attestation: WebAuthnJson('what `startRegistration()` returned'),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'defaults to a name from the browser' })),
});
// The rule of domain/passkeys/passkey-policy.ts, for the route descriptions.
const MANAGE_RULE =
  'While the owner has no passkey, any session may register the first one. Once they have one, adding or removing a passkey needs a session made by passkey sign-in (POST /api/webauthn/login/verify): with a password session the answer is 403 `sign in with one of your passkeys to add or remove passkeys` with `next_step`.';

// The email is optional: given, only a passkey of that account (or of no account by that email) may sign in.
const LoginQuery = Type.Object({ email: Type.Optional(Email) });
const LoginIn = Type.Object({ challenge: Challenge, assertion: WebAuthnJson('what `startAuthentication()` returned') });

export async function passkeyRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/webauthn/register/options', {
    schema: {
      summary: 'Options to register a passkey for the signed-in owner',
      description: `The challenge is bound to this owner and this session. User verification is required; the credential must be discoverable. ${MANAGE_RULE}`,
      tags: ['passkeys'],
      response: withErrors({ 200: CeremonyOut('startRegistration()') }, 401, 403),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    return s.passkeys.registrationOptions(owner);
  });

  app.post('/api/webauthn/register/verify', {
    schema: {
      summary: 'Register a passkey',
      description: `400 when the challenge is unknown, used, expired or from another session, or the attestation does not verify; 409 when the credential is already registered. ${MANAGE_RULE}`,
      tags: ['passkeys'],
      body: RegisterIn,
      response: withErrors({ 200: Type.Object({ verified: Type.Literal(true), device_id: Type.String() }) }, 400, 401, 403, 409),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    const { challenge, attestation, name } = request.body;
    const { deviceId } = await s.passkeys.verifyRegistration(owner, {
      challenge,
      attestation,
      name,
      userAgent: request.headers['user-agent'],
    });
    return { verified: true as const, device_id: deviceId };
  });

  app.get('/api/webauthn/login/options', {
    schema: {
      summary: 'Options to sign in with a passkey',
      description: 'With or without `email`: no `allowCredentials`, so the authenticator offers its discoverable passkeys (also as autofill, `mediation: \'conditional\'`), and the answer has the same shape whether or not the email has an account. The challenge is bound to no user: POST /api/webauthn/login/verify finds the account by the passkey used. A given `email` is checked there: a passkey of another account is refused. Throttled per client address.',
      tags: ['passkeys'],
      querystring: LoginQuery,
      response: withErrors({ 200: CeremonyOut('startAuthentication()') }, 429),
    },
  }, async (request) => {
    return s.passkeys.loginOptions(request.query.email, request.ip);
  });

  app.post('/api/webauthn/login/verify', {
    schema: {
      summary: 'Sign in with a passkey',
      description: 'Answers like POST /api/login (sets the `session` cookie). Any failure is 401 `passkey sign-in failed`. Throttled per client address. The session it makes may add and remove passkeys; a password session may only add the first.',
      tags: ['passkeys'],
      body: LoginIn,
      response: withErrors({ 200: SignedInOut }, 401, 429),
    },
  }, async (request, reply) => {
    const user = await s.passkeys.verifyLogin(request.body, request.ip);
    const signedIn = await s.accounts.startSession(user, 'passkey');
    s.auth.signIn(reply, signedIn);
    return signedInOut(s.accounts, signedIn);
  });
}
