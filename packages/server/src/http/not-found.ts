import type { FastifyInstance, FastifyRequest } from 'fastify';

/** A rendered page: the public site's HTML 404 page (`buildPublicSite(...).fallback`). */
export interface NotFoundPage {
  type: string;
  cache: string;
  body: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Gives browsers this page (instead of the JSON `{detail}`) for unknown addresses outside the
     * API; the public pages set it once rendered. Until then every unknown address answers JSON.
     */
    useNotFoundPage(page: NotFoundPage): void;
  }
}

/** Where every unknown address answers JSON, whatever the client accepts: the API, OIDC and well-known files. */
const API_PREFIXES = ['/api', '/oidc', '/.well-known'];

const isApiPath = (path: string): boolean => API_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/** The q-value a client gives a media type in `Accept` (0 when not listed; wildcards do not count). */
function qualityOf(accept: string, types: readonly string[]): number {
  let best = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!types.includes(type)) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(value) && value > best) best = Math.min(value, 1);
  }
  return best;
}

/**
 * A browser navigating: `Accept` names HTML, and above JSON. A bare wildcard (curl, fetch, SDKs), no
 * `Accept` at all, or a tie reads as an API client.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return qualityOf(accept, ['text/html', 'application/xhtml+xml']) > qualityOf(accept, ['application/json']);
}

function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  return !isApiPath(request.url.split('?')[0] ?? '') && prefersHtml(request.headers.accept);
}

/**
 * 404 for every address no route answers: the JSON `{detail}` of every other error, except that a
 * browser (GET or HEAD asking for HTML) outside `/api`, `/oidc` and `/.well-known` gets the public
 * site's HTML 404 page, the one unknown `/docs` and `/legal` addresses get. API clients and the API
 * itself keep JSON whatever they accept.
 */
export function installNotFound(app: FastifyInstance): void {
  let page: NotFoundPage | undefined;
  app.decorate('useNotFoundPage', (rendered: NotFoundPage) => {
    page = rendered;
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (!isApiPath(path)) reply.header('vary', 'accept');
    if (page && wantsPage(request)) {
      return reply.code(404).header('content-type', page.type).header('cache-control', page.cache).send(page.body);
    }
    return reply.code(404).send({ detail: `not found: ${request.method} ${path}` });
  });
}
