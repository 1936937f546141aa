import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { SignedInOut, signedInOut } from './user-out.ts';
import { Email, ReadableLine, withErrors } from '../../schemas/common.ts';
import { LINK_ATTEMPTS } from '../../../domain/accounts/email-links.ts';
import { BAD_UNDO_LINK, UNDO_PATH, type UndoResult } from '../../../domain/passkeys/first-passkey.ts';
import { mailTime } from '../../../domain/mail/mail-texts.ts';
import { answerLinkConfirm, withFormBodies } from './email-pages.ts';
import { linkPageRoute } from '../link-page.ts';

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
  name: Type.Optional(ReadableLine({ minLength: 1, maxLength: 100, description: 'defaults to a name from the browser' })),
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
      description: 'Answers like POST /api/login (sets the `session` cookie). Any failure is 401 `passkey sign-in failed`. Throttled per client address (an IPv6 client: per /64, and per /48). The session it makes may add and remove passkeys; a password session may only add the first.',
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

  await undoRoutes(base, s);
}

const UndoOut = Type.Object({
  undone: Type.Literal(true),
  device_id: Type.String({ description: 'the passkey the link was about' }),
  removed: Type.Boolean({ description: 'false when the passkey had already been removed' }),
  passkeys_removed: Type.Array(Type.String(), { description: 'every passkey removed: the first (when still there) and each one enrolled after it' }),
  grants_revoked: Type.Integer({ minimum: 0, description: 'grants approved since the first passkey, now revoked' }),
  sessions_ended: Type.Literal(true),
});
const UNDO_TITLE = 'Remove the new passkey';
const BAD_UNDO_PAGE = {
  title: 'This link does not work',
  lines: [
    'The undo link is not valid: it was already used or it expired (links last 24 hours).',
    'If a passkey you do not know is on your account, sign in and change your password at once.',
  ],
  links: [{ href: '/app#account', label: 'Open the app' }],
};

/**
 * The undo link mailed when an account's first passkey is added (domain/passkeys/first-passkey.ts):
 * a page that only shows what it would do, and the confirmation, which removes that passkey and
 * every one enrolled after it, revokes what they approved and ends every session of the account.
 */
async function undoRoutes(base: FastifyInstance, s: Services): Promise<void> {
  await withFormBodies(base, async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    const limits = `At most ${LINK_ATTEMPTS.perAddress} page views and confirmations per client address per ${LINK_ATTEMPTS.windowSec / 60} minutes (429).`;

    linkPageRoute(scope, {
      path: UNDO_PATH,
      summary: 'The page behind a passkey undo link',
      description: `When an account's first passkey is added (any session may add the first, a password session too), the owner is told in the inbox and, when the email is verified, by a mail with this single-use link, valid 24 hours. The page shows the passkey and a button that POSTs the token to ${UNDO_PATH}; opening it changes nothing. A missing, unknown, used or expired token: 400 with a page saying what to do (as JSON \`{detail}\` to a client that does not ask for HTML). ${limits}`,
      tags: ['passkeys'],
      tokenDescription: 'the `token` of the mailed undo link',
      title: UNDO_TITLE,
      preview: (token, ip) => s.firstPasskey.preview(token, ip),
      badDetail: BAD_UNDO_LINK,
      badPage: BAD_UNDO_PAGE,
      page: (shown, token) => {
        const what = shown.passkey ? `The passkey "${shown.passkey.name}", added on ${mailTime(shown.passkey.createdAt)}, will be removed` : 'That passkey has already been removed';
        return {
          title: UNDO_TITLE,
          lines: [
            `${what}, with every passkey added after it and every access approved since, and every session of the account will be signed out.`,
            'Do this if you did not add it yourself: someone knows your password. Then sign in and change your password.',
          ],
          form: { action: UNDO_PATH, token, label: shown.passkey ? 'Remove it and sign out everywhere' : 'Sign out everywhere' },
        };
      },
    });

    app.post(UNDO_PATH, {
      schema: {
        summary: 'Undo the first passkey of an account with the mailed link',
        description: `Uses the link's token once and undoes everything that came through the first passkey's trust, in one transaction: removes the passkey it names (\`removed\` false when it was already gone) and every passkey enrolled after it (\`passkeys_removed\`), revokes every grant approved since (\`grants_revoked\`; OIDC sign-ins on them end), and ends every session of the account. The owner can then sign in with the password and enrol their own passkey; recorded in Activity (\`passkey.undone\`) and told in the inbox. No session needed and no cookie read. A bad, used or expired token: 400 \`{detail}\`; of two confirmations at once exactly one acts. The page's button sends the token form-encoded (JSON \`{token}\` works as well); a client that asks for HTML, as a browser does, gets a page back, any other JSON. ${limits}`,
        tags: ['passkeys'],
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200, description: 'the `token` of the mailed undo link' }) }),
        response: withErrors({ 200: UndoOut }, 400, 429),
      },
    }, async (request, reply) => {
      return answerLinkConfirm(reply, request.headers.accept, {
        title: UNDO_TITLE,
        confirm: () => s.firstPasskey.undo(request.body.token, request.ip),
        badPage: BAD_UNDO_PAGE,
        done: (undone) => ({
          title: 'Passkey removed',
          lines: [
            undonePageLine(undone),
            'Sign in with your password and change it now: whoever added the passkey knows it. Then add your own passkey.',
          ],
          links: [{ href: '/app', label: 'Sign in' }],
        }),
      });
    });
  });
}

function undonePageLine(undone: UndoResult): string {
  const keys = undone.passkeys_removed.length;
  const passkeys = keys === 0 ? 'The passkey had already been removed' : keys === 1 ? 'The passkey was removed' : `The passkey and the ${keys - 1} added after it were removed`;
  const grants = undone.grants_revoked === 0 ? '' : `, ${undone.grants_revoked === 1 ? 'one access approved with them was' : `${undone.grants_revoked} accesses approved with them were`} revoked`;
  return `${passkeys}${grants}, and every session of the account was signed out.`;
}
