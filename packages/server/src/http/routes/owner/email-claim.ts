import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { BAD_CLAIM_LINK, CLAIM_CONFIRMS_PER_LINK, CLAIM_PATH } from '../../../domain/accounts/address-takeover.ts';
import { LINK_ATTEMPTS } from '../../../domain/accounts/email-links.ts';
import { withErrors } from '../../schemas/common.ts';
import { answerLinkConfirm, withFormBodies } from './email-pages.ts';
import { LinkToken, linkPageRoute } from '../link-page.ts';

const ClaimedOut = Type.Object({
  email_verified: Type.Literal(true),
  email: Type.String(),
  account_created: Type.Literal(true),
  next_step: Type.String(),
});

const PAGE_TITLE = 'Confirm your email address';
const BAD_LINK_PAGE = {
  title: 'This link does not work',
  lines: ['The link is not valid: it was already used, or it expired (links last 24 hours).', 'Sign up again with the address to get a new link, or sign in if your account exists.'],
  links: [{ href: '/app', label: 'Open the app' }],
};
const LIMITS = `At most ${LINK_ATTEMPTS.perAddress} page views and confirmations of mailed links per client address (an IPv6 client: per /64) per ${LINK_ATTEMPTS.windowSec / 60} minutes (429).`;

/** Address take-over (address-takeover.ts): the page behind the mailed link, and its confirmation. */
export async function emailClaimRoutes(base: FastifyInstance, s: Services): Promise<void> {
  await withFormBodies(base, async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();

    linkPageRoute(scope, {
      path: CLAIM_PATH,
      summary: 'The page behind an address take-over link',
      description: `The link POST /api/users mails when another account holds the address without having verified it. An HTML page with the address and a "Confirm" button, which POSTs the token to ${CLAIM_PATH}; opening the page changes nothing (mail scanners open links). A missing, unknown, used or expired token: 400 with a page saying what to do; a client that does not ask for HTML gets JSON \`{detail}\`. ${LIMITS}`,
      title: PAGE_TITLE,
      preview: (token, ip) => s.addressTakeover.preview(token, ip),
      badDetail: BAD_CLAIM_LINK,
      badPage: BAD_LINK_PAGE,
      page: (shown, token) => ({
        title: PAGE_TITLE,
        lines: [
          `Confirm that ${shown.email} is your address: your new Mandate account is created with it, verified.`,
          'Another account that never proved this address is theirs loses it. If you did not sign up, leave this page: nothing changes.',
        ],
        form: { action: CLAIM_PATH, token, label: `Confirm ${shown.email}`, password: 'The password you chose at sign-up' },
      }),
    });

    app.post(CLAIM_PATH, {
      schema: {
        summary: 'Take an address from an account that never verified it',
        description: `Needs the password chosen at the sign-up the link is for (the mailbox and the sign-up must be one person; another password: 403 with \`next_step\`, the link stays usable; at most ${CLAIM_CONFIRMS_PER_LINK} tries per link, then 429). Uses the link's token once and, in one transaction, takes the address from the account that holds it without having verified it (its sessions end; it keeps its agents and passkeys, not the address), and creates the account of the sign-up that asked for the link, with the address verified (an ADMIN_EMAILS address is admin from then on). No session is made: sign in with the address and the password chosen at sign-up. 400 \`{detail}\` for a bad, used or expired token; 409 when a verified account has the address by now (of two confirmations racing for one address exactly one succeeds). No session needed and no cookie read. The page's button sends the token form-encoded (JSON \`{token}\` works as well); a client that asks for HTML gets a page back. ${LIMITS}`,
        tags: ['owner'],
        body: Type.Object({ token: LinkToken, password: Type.String({ minLength: 1, maxLength: 1024, description: 'the password chosen at sign-up' }) }),
        response: withErrors({ 200: ClaimedOut }, 400, 403, 409, 429),
      },
    }, async (request, reply) => {
      return answerLinkConfirm(reply, request.headers.accept, {
        title: PAGE_TITLE,
        confirm: () => s.addressTakeover.confirm(request.body.token, request.body.password, request.ip),
        badPage: BAD_LINK_PAGE,
        done: (claimed) => ({
          title: 'Account created',
          lines: [`${claimed.email} is yours and verified.`, 'Sign in with it and the password you chose.'],
          links: [{ href: '/app', label: 'Sign in' }],
        }),
      });
    });
  });
}
