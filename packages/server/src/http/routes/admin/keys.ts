import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';

export async function adminKeyRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.post('/api/admin/keys/rotate', {
    schema: {
      summary: 'Rotate the signing key (admin only)',
      description: 'New tokens are signed with the new `kid`; retired keys stay published and verifiable for the grace window. The body is optional and ignored.',
      tags: ['admin'],
      response: withErrors({ 200: Type.Object({ kid: Type.String(), retired: Type.Array(Type.String()), grace_seconds: Type.Integer() }) }, 401, 403),
    },
  }, async (request) => {
    await s.auth.admin(request);
    const { kid, retired } = await s.keys.rotate();
    request.log.info({ kid, retired }, 'signing key rotated');
    return { kid, retired, grace_seconds: s.config.keyRotationGraceSec };
  });
}
