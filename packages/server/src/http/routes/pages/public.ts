import type { FastifyInstance, FastifyReply } from 'fastify';
import { buildPublicSite, type PublicResponse } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { challengeRoutes } from './challenge.ts';
import { checkPageRoutes } from './check.ts';
import { checkAgentPageRoutes } from './check-agent.ts';

function send(reply: FastifyReply, answer: PublicResponse): FastifyReply {
  reply.code(answer.status).header('content-type', answer.type).header('cache-control', answer.cache);
  if (answer.location) reply.header('location', answer.location);
  return reply.send(answer.body);
}

/**
 * The public pages (home, how it works, for sites, docs, legal, robots.txt, sitemap.xml, llms.txt),
 * rendered once at start by @mandate/web with this service's BASE_URL. Each page is an exact route;
 * any other path under /docs or /legal gets the HTML 404 page (or a redirect without the trailing
 * slash), never a file lookup. Hidden from the OpenAPI description: these are pages, not API (the
 * challenge's routes, which also answer agents in JSON, are described).
 */
export async function publicPageRoutes(app: FastifyInstance, s: Services): Promise<void> {
  const site = buildPublicSite({ baseUrl: s.config.baseUrl, agentPackage: s.config.agentPackage });
  for (const warning of site.warnings) app.log.warn(warning);
  app.useNotFoundPage(site.fallback('/404'));

  for (const [path, answer] of site.pages) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) => send(reply, answer));
  }
  await challengeRoutes(app, s, site);
  await checkPageRoutes(app, s, site);
  await checkAgentPageRoutes(app, s, site);
  for (const pattern of site.fallbackRoutes) {
    app.get(pattern, { schema: { hide: true } }, async (request, reply) => send(reply, site.fallback(request.url)));
  }
}
