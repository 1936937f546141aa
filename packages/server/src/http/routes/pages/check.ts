import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { PublicSite } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { AppError } from '../../../domain/errors.ts';

const CheckQuery = Type.Object({ site: Type.Optional(Type.String()) });

/**
 * GET /check?site= (decisions §23): the HTML twin of GET /api/readiness, with the same cache and
 * limit. A bad site or too many checks is shown on the page (400 or 429 with Retry-After), in words.
 */
export async function checkPageRoutes(app: FastifyInstance, s: Services, site: PublicSite): Promise<void> {
  app.get<{ Querystring: { site?: string } }>('/check', { schema: { hide: true, querystring: CheckQuery } }, async (request, reply) => {
    const input = (request.query.site ?? '').trim();
    let page;
    if (input === '') {
      page = site.check({ site: '' });
    } else {
      try {
        page = site.check({ site: input, report: await s.readiness.check(input, request.ip) });
      } catch (e) {
        if (!(e instanceof AppError) || (e.status !== 400 && e.status !== 429)) throw e;
        const retry = e.headers['retry-after'];
        const error = e.status === 429 ? `Too many checks from your address: try again in ${Math.ceil(Number(retry ?? 60) / 60)} minutes.` : `${e.detail[0]?.toUpperCase() ?? ''}${e.detail.slice(1)}.`;
        if (retry !== undefined) void reply.header('retry-after', retry);
        page = site.check({ site: input, error }, e.status);
      }
    }
    return reply.code(page.status).type(page.type).header('cache-control', page.cache).send(page.body);
  });
}
