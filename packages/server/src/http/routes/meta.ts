import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services.ts';
import { unavailable } from '../../domain/errors.ts';

/** The health check answers on both paths: `/api/healthz` beside the API, `/healthz` where probes look first. */
export const HEALTH_PATHS = ['/api/healthz', '/healthz'] as const;

export async function metaRoutes(app: FastifyInstance, s: Services): Promise<void> {
  for (const path of HEALTH_PATHS) app.get(path, {
    schema: {
      summary: 'Liveness and database reachability',
      description: `200 when the service runs and its database answers, 503 \`service unavailable\` otherwise. The same check answers at ${HEALTH_PATHS.map((p) => `\`${p}\``).join(' and ')}.`,
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
