import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services.ts';
import { unavailable } from '../../domain/errors.ts';

export async function metaRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.get('/api/healthz', {
    schema: {
      summary: 'Liveness and database reachability',
      tags: ['meta'],
      response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.String() }), 503: Type.Object({ detail: Type.String() }) },
    },
  }, async () => {
    try {
      await s.store.ping();
    } catch {
      throw unavailable();
    }
    return { status: 'ok' as const, database: s.store.dialect };
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
