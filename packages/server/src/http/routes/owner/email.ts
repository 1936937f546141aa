import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { BAD_VERIFY_LINK, EMAIL_SEND_LIMIT, VERIFY_PATH } from '../../../domain/accounts/email-verification.ts';
import { LINK_ATTEMPTS } from '../../../domain/accounts/email-links.ts';
import { withErrors } from '../../schemas/common.ts';
import { answerLinkConfirm, withFormBodies } from './email-pages.ts';
import { LinkToken, linkPageRoute } from '../link-page.ts';

const SentOut = Type.Object({
  sent: Type.Literal(true),
  to: Type.String({ description: 'the address the link went to: the account\'s current email' }),
  expires_in: Type.Integer({ description: 'seconds the link stays valid: 86400' }),
});
const VerifiedOut = Type.Object({ email_verified: Type.Literal(true), email: Type.String() });

const PAGE_TITLE = 'Verify your email address';
const BAD_LINK_PAGE = {
  title: 'This link does not work',
  lines: [
    'The verification link is not valid: it was already used, it expired (links last 24 hours), or the account\'s email address changed since it was sent.',
    'Open the app and send a new link from Account, Verify email. Only the newest address of the account can be verified.',
  ],
  links: [{ href: '/app#account', label: 'Open the app' }],
};

/** Email verification (decisions §25): mail a link, the page behind it, and its confirmation. */
export async function emailRoutes(base: FastifyInstance, s: Services): Promise<void> {
  await withFormBodies(base, async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();

    app.post('/api/email/send', {
      schema: {
        summary: 'Mail a verification link to the owner\'s email address',
        description: `Sends a single-use link, valid 24 hours, to the account's current address (over SMTP; a service without SMTP_URL writes the mail to its log instead). Opening it shows a page with a button; pressing it (POST ${VERIFY_PATH}) verifies the address. Until then the address is not shared with sites (\`user:email\` is not offered, the OIDC \`email\` scope releases nothing) and gives no admin role. Body: none or \`{}\`. 409 when the address is already verified; at most ${EMAIL_SEND_LIMIT.perAccount} links per account per hour, then 429 with \`retry_after\`. A new link does not end earlier ones; changing the address (PATCH /api/me) does.`,
        tags: ['owner'],
        response: withErrors({ 200: SentOut }, 401, 403, 409, 429),
      },
    }, async (request) => {
      const { user } = await s.auth.required(request);
      return s.emailVerification.send(user);
    });

    linkPageRoute(scope, {
      path: VERIFY_PATH,
      summary: 'The page behind a verification link',
      description: `An HTML page that shows the address and a "Verify" button, which POSTs the token to ${VERIFY_PATH}. Opening the page does not use the link (mail scanners open links). A missing, unknown, used or expired token, or one sent to an address the account no longer has: 400 with a page saying so and what to do (send a new link from the app); a client that does not ask for HTML gets the 400 as JSON \`{detail}\`. At most ${LINK_ATTEMPTS.perAddress} page views and confirmations per client address per ${LINK_ATTEMPTS.windowSec / 60} minutes.`,
      title: PAGE_TITLE,
      preview: (token, ip) => s.emailVerification.preview(token, ip),
      badDetail: BAD_VERIFY_LINK,
      badPage: BAD_LINK_PAGE,
      page: (shown, token) => ({
        title: PAGE_TITLE,
        lines: [`Confirm that ${shown.email} is your address for Mandate.`, 'Once verified, sites you approve can be given this address, and Mandate can mail you about your account.'],
        form: { action: VERIFY_PATH, token, label: `Verify ${shown.email}` },
      }),
    });

    app.post(VERIFY_PATH, {
      schema: {
        summary: 'Verify the email address of a mailed link',
        description: `Uses the link's token once: the account's address is verified if it is still the one the link was sent to. No session needed (the link may be opened on another device) and no cookie read, so no cross-site request can use it without the token. A bad, used or expired token: 400 \`{detail}\`; of two confirmations at once exactly one succeeds. The page's button sends the token form-encoded (JSON \`{token}\` works as well); a client that asks for HTML, as a browser does, gets a page back, any other JSON. At most ${LINK_ATTEMPTS.perAddress} attempts per client address per ${LINK_ATTEMPTS.windowSec / 60} minutes (429).`,
        tags: ['owner'],
        body: Type.Object({ token: LinkToken }),
        response: withErrors({ 200: VerifiedOut }, 400, 429),
      },
    }, async (request, reply) => {
      return answerLinkConfirm(reply, request.headers.accept, {
        title: PAGE_TITLE,
        confirm: () => s.emailVerification.verify(request.body.token, request.ip),
        badPage: BAD_LINK_PAGE,
        done: (verified) => ({
          title: 'Email address verified',
          lines: [`${verified.email} is verified. You can close this page.`, 'Sites you approve can now be given this address, and Mandate can mail you about your account.'],
          links: [{ href: '/app#account', label: 'Open the app' }],
        }),
      });
    });
  });
}
