import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';

export const JwksOut = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) });

export async function jwksRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.get('/api/v1/jwks', {
    schema: {
      summary: 'Public keys that sign passes, step-up tokens and revocation lists',
      description: 'ES256 keys selected by `kid`. During a rotation the previous key stays listed for the grace window (KEY_ROTATION_GRACE_SECONDS, default 24 h).',
      tags: ['site'],
      response: { 200: JwksOut },
    },
  }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return s.keys.jwks();
  });
}
