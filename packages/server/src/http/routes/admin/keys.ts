import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';

/** What a "revoke now" rotation breaks, said in the answer so the admin who asked for it knows. */
export const REVOKE_NOW_CONSEQUENCES = 'The revoked keys are deleted: they are no longer published at /api/v1/jwks and nothing signed with them verifies any more, on this node at once and on the others within a second. '
  + 'That ends every agent pass signed with them: sites answer invalid_token until the agent gets a new pass from /api/v1/token (its grant and refresh token still work; the SDK does so when its pass nears its end, within 10 minutes). '
  + 'It also ends every step-up token, OIDC ID token and access token, and revocation snapshot signed with them. '
  + 'Local-mode sites hold the key set in memory: until they fetch /api/v1/jwks again they still accept the revoked keys\' tokens and refuse the new key\'s; they fetch it when they meet the new kid (at most every 10 s by default) and in any case within 10 minutes; restart them to drop the old key at once. '
  + 'Grants, refresh tokens, sessions and OIDC sign-ins are not signed with these keys and stay as they are.';

const RotateIn = Type.Object(
  { revoke_now: Type.Optional(Type.Boolean({ description: 'true: delete every older key at once, no grace window (use when a private key leaked). Default false.' })) },
  { description: 'Optional; other fields are ignored.' },
);

const Rotated = Type.Object({
  kid: Type.String({ description: 'the new current key' }),
  retired: Type.Array(Type.String(), { description: 'keys that were current before' }),
  revoked: Type.Array(Type.String(), { description: 'keys deleted at once (revoke_now); empty otherwise' }),
  grace_seconds: Type.Integer({ description: 'how long retired keys stay published and verifiable: KEY_ROTATION_GRACE_SECONDS, or 0 with revoke_now' }),
  consequences: Type.String({ description: 'what the rotation breaks, in words' }),
});

export async function adminKeyRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.post<{ Body: Static<typeof RotateIn> | null | undefined }>('/api/admin/keys/rotate', {
    schema: {
      summary: 'Rotate the signing key (admin only)',
      description: 'New tokens are signed with the new `kid`. By default retired keys stay published and verifiable for the grace window '
        + '(`KEY_ROTATION_GRACE_SECONDS`), so nothing breaks. With `{"revoke_now": true}` (the old private key leaked) every older key is '
        + 'deleted at once instead: no longer published, nothing signed with it verifies (passes, step-up tokens, OIDC ID/access tokens, '
        + 'revocation snapshots), on every node within a second; agents must get new passes, local-mode sites must refetch the key set. '
        + '`consequences` says so. The body is optional; `{}` or none is a normal rotation.',
      tags: ['admin'],
      body: Type.Optional(Type.Union([RotateIn, Type.Null()])),
      response: withErrors({ 200: Rotated }, 401, 403),
    },
  }, async (request) => {
    await s.auth.admin(request);
    const revokeNow = request.body?.revoke_now === true;
    const { kid, retired, revoked } = await s.keys.rotate({ revokeNow });
    if (revokeNow) request.log.warn({ kid, retired, revoked }, 'signing key rotated; older keys revoked at once');
    else request.log.info({ kid, retired }, 'signing key rotated');
    const grace = revokeNow ? 0 : s.config.keyRotationGraceSec;
    return {
      kid,
      retired,
      revoked,
      grace_seconds: grace,
      consequences: revokeNow
        ? REVOKE_NOW_CONSEQUENCES
        : `Nothing breaks: the retired keys stay published and verifiable for ${grace} s, so tokens signed before keep working until they expire and sites that refetch the key set see the new key.`,
    };
  });
}
