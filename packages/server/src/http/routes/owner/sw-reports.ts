import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { addressKey } from '../../../domain/client-address.ts';

export const SW_REPORT_KINDS = ['push-received', 'push-clicked', 'subscription-lost', 'error'] as const;
/** Reports per client (IPv4 address or IPv6 /64) per minute: a worker in a loop must not grow a counter for ever. */
const REPORTS_PER_MINUTE = 120;

export async function swReportRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/sw/:kind', {
    bodyLimit: 2048,
    schema: {
      summary: "The service worker's diagnostics",
      description: `Counts one event (\`sw:<kind>\` in the counters table) so an operator can see whether pushes arrive and are tapped. No session needed (a worker may outlive it); the body (at most 2 kB, e.g. \`{detail}\`) is read for size only and never stored or logged. 413 over 2 kB; ${REPORTS_PER_MINUTE} per client address (an IPv6 client: per /64) per minute.`,
      tags: ['push'],
      params: Type.Object({ kind: Type.Union(SW_REPORT_KINDS.map((k) => Type.Literal(k)), { description: SW_REPORT_KINDS.join(', ') }) }),
      body: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
      response: withErrors({ 204: Type.Null() }, 413, 429),
    },
  }, async (request, reply) => {
    await s.limiter.check(`sw-report:${addressKey(request.ip)}`, REPORTS_PER_MINUTE, 60);
    await s.store.counters.next(`sw:${request.params.kind}`);
    return reply.code(204).send(null);
  });
}
