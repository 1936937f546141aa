import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { BAD_RESET_LINK, FORGOT_PER_ACCOUNT, FORGOT_PER_CLIENT, MIN_PASSWORD_LENGTH, RESET_LINK_LIFETIME_SEC, RESET_PATH } from '../../../domain/accounts/password-reset.ts';
import { LINK_ATTEMPTS } from '../../../domain/accounts/email-links.ts';
import { withErrors } from '../../schemas/common.ts';
import { answerLinkConfirm, withFormBodies } from './email-pages.ts';
import { linkPageRoute } from '../link-page.ts';

const ForgotIn = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254, description: 'the address of the account' }) });
const ForgotOut = Type.Object({
  accepted: Type.Literal(true),
  detail: Type.String({ description: 'the same text whether or not an account has the address' }),
  next_step: Type.String(),
});
const ResetIn = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'the `token` of the mailed link' }),
  new_password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, description: `the new password: at least ${MIN_PASSWORD_LENGTH} characters` }),
});
const ResetOut = Type.Object({
  password_reset: Type.Literal(true),
  email: Type.String({ description: 'the account\'s address: sign in with it' }),
  signed_in: Type.Literal(false, { description: 'the reset signs nobody in: every session ended' }),
  next_step: Type.String(),
});

const PAGE_TITLE = 'Choose a new password';
const BAD_LINK_PAGE = {
  title: 'This link does not work',
  lines: [
    'The password link is not valid: it was already used, it expired (links last 1 hour), a newer link was asked for (only the newest works), or the account\'s email address changed since it was sent.',
    'Open the app and choose "Forgot your password?" on the sign-in page to get a new link.',
  ],
  links: [{ href: '/app', label: 'Open the app' }],
};
const LINK_LIMITS = `At most ${LINK_ATTEMPTS.perAddress} page views and confirmations of mailed links per client address (an IPv6 client: per /64) per ${LINK_ATTEMPTS.windowSec / 60} minutes (429).`;

/** Forgotten password (domain/accounts/password-reset.ts): ask for a link, the page behind it, the reset. */
export async function passwordRoutes(base: FastifyInstance, s: Services): Promise<void> {
  await withFormBodies(base, async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();

    app.post('/api/password/forgot', {
      schema: {
        summary: 'Forgot the password: mail a link to choose a new one',
        description: `Always the same 200 answer (same body, about the same time) whether or not an account has the address and whether or not it verified it: the account is looked up after the answer is decided. A single-use link, valid ${RESET_LINK_LIFETIME_SEC / 60} minutes, goes only to an address its account has VERIFIED (an unverified address gets nothing: it was never proven to be the holder's). A new request voids the account's older links: only the newest mail works. At most ${FORGOT_PER_ACCOUNT.limit} requests per address asked about per hour, and ${FORGOT_PER_CLIENT.perAddress} per client address (an IPv6 client: per /64; ${FORGOT_PER_CLIENT.perNetwork} per IPv6 /48) per hour, then 429 with \`retry_after\` (counted whether or not an account has the address). No session needed.`,
        tags: ['owner'],
        body: ForgotIn,
        response: withErrors({ 200: ForgotOut }, 429),
      },
    }, async (request) => s.passwordReset.forgot(request.body.email, request.ip));

    linkPageRoute(scope, {
      path: RESET_PATH,
      summary: 'The page behind a password link',
      description: `An HTML page with the account's address and a field for the new password (at least ${MIN_PASSWORD_LENGTH} characters); its button POSTs the token and the password to ${RESET_PATH}. Opening the page does not use the link (mail scanners open links). A missing, unknown, used, expired or voided token: 400 with a page saying what to do; a client that does not ask for HTML gets JSON \`{detail}\`. ${LINK_LIMITS}`,
      title: PAGE_TITLE,
      preview: (token, ip) => s.passwordReset.preview(token, ip),
      badDetail: BAD_RESET_LINK,
      badPage: BAD_LINK_PAGE,
      page: (shown, token) => ({
        title: PAGE_TITLE,
        lines: [`Choose a new password for ${shown.email}.`, 'Every device signed in to the account is signed out; your passkeys stay. Then sign in with the new password.'],
        form: { action: RESET_PATH, token, label: 'Set the new password', newPassword: { label: `New password (at least ${MIN_PASSWORD_LENGTH} characters)`, minLength: MIN_PASSWORD_LENGTH } },
      }),
    });

    app.post(RESET_PATH, {
      schema: {
        summary: 'Set a new password with a mailed link',
        description: `Uses the link's token once (of racing callers exactly one succeeds) and, in one transaction, sets the new password (argon2id), ends every session of the account, voids its other password links and writes an Activity record (\`password.reset\`); the owner gets a \`security\` notice (inbox and push). Nobody is signed in: sign in with the new password (POST /api/login). Passkeys stay; approving still needs one. A bad, used, expired or voided token, or one sent to an address the account no longer has: 400 \`{detail}\`. No session needed and no cookie read. The page's form sends \`token\` and \`new_password\` form-encoded (JSON works as well); a client that asks for HTML gets a page back. ${LINK_LIMITS}`,
        tags: ['owner'],
        body: ResetIn,
        response: withErrors({ 200: ResetOut }, 400, 429),
      },
    }, async (request, reply) => {
      return answerLinkConfirm(reply, request.headers.accept, {
        title: PAGE_TITLE,
        confirm: () => s.passwordReset.reset(request.body.token, request.body.new_password, request.ip),
        badPage: BAD_LINK_PAGE,
        done: (done) => ({
          title: 'Password changed',
          lines: [`The password of ${done.email} is changed, and every device was signed out.`, 'Sign in with your email address and the new password.'],
          links: [{ href: '/app', label: 'Sign in' }],
        }),
      });
    });
  });
}
