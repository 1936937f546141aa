import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';

const DeleteIn = Type.Object({
  confirm: Type.String({ maxLength: 254, description: "the account's email address, typed out (compared as sign-up stores emails: trimmed, lower case)" }),
  password: Type.Optional(Type.String({ maxLength: 1024, description: 'required when the account has a password' })),
});

const DESCRIPTION = `Erases the signed-in account (decisions §16). \`confirm\` must be the account's email (else 400). An account with a password must send it (missing: 400; wrong: 403), checked and throttled as password sign-in is (429 with Retry-After, counted per account and client address together with POST /api/login); an account without one needs a passkey session (403 with \`next_step\`).

In one transaction: every agent is removed (tombstoned at a new \`rev_seq\`: cloud verify answers \`agent_revoked\`, the revocation list lists it, no pass or OIDC token is issued for it), grants revoked, open requests cancelled, OIDC sign-ins ended (a client with a \`backchannel_logout_uri\` gets a back-channel logout through the outbox), passkeys, devices, sessions, mailed links, notification settings, notifications and unsent messages deleted, the profile blanked (email replaced by an unroutable placeholder, so the address can sign up again; display name, password and phone gone), and the activity trail anonymised (records keep their \`seq\`, action, time, agent and site; IP addresses and details are dropped). Answers 200 \`{deleted: true}\` and clears the session cookie.`;

export async function accountDeleteRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/account/delete', {
    schema: {
      summary: 'Delete the account',
      description: DESCRIPTION,
      tags: ['owner'],
      body: DeleteIn,
      response: withErrors({ 200: Type.Object({ deleted: Type.Literal(true) }) }, 400, 401, 403, 429),
    },
  }, async (request, reply) => {
    const owner = await s.auth.required(request);
    const { confirm, password } = request.body;
    await s.accountDeletion.delete(owner, { confirm, ...(password === undefined ? {} : { password }) }, request.ip);
    s.auth.signOut(reply);
    return { deleted: true as const };
  });
}
