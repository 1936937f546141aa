import type { FastifyInstance, FastifyReply } from 'fastify';
import { buildPublicSite, type PublicResponse, type PublicSite } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { challengeRoutes } from './challenge.ts';
import { checkPageRoutes } from './check.ts';
import { checkAgentPageRoutes } from './check-agent.ts';

function send(reply: FastifyReply, answer: PublicResponse): FastifyReply {
  reply.code(answer.status).header('content-type', answer.type).header('cache-control', answer.cache);
  if (answer.location) reply.header('location', answer.location);
  return reply.send(answer.body);
}

const sites = new Map<string, PublicSite>();

/**
 * The public site for a base URL and agent package, built once per process: building renders every
 * page of docs/ (about 0.1 s of CPU), and a test process builds dozens of apps. The site is read-only
 * and its sources are the repository's files, which do not change while the service runs.
 */
function publicSite(baseUrl: string, agentPackage: string | null): PublicSite {
  const key = JSON.stringify([baseUrl, agentPackage]);
  let site = sites.get(key);
  if (!site) {
    site = buildPublicSite({ baseUrl, agentPackage });
    sites.set(key, site);
  }
  return site;
}

/**
 * The public pages (home, how it works, for sites, docs, legal, robots.txt, sitemap.xml, llms.txt),
 * rendered once at start by @mandate/web with this service's BASE_URL. Each page is an exact route;
 * any other path under /docs or /legal gets the HTML 404 page (or a redirect without the trailing
 * slash), never a file lookup. Hidden from the OpenAPI description: these are pages, not API (the
 * challenge's routes, which also answer agents in JSON, are described).
 */
export async function publicPageRoutes(app: FastifyInstance, s: Services): Promise<void> {
  const site = publicSite(s.config.baseUrl, s.config.agentPackage);
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
