import type { FastifyInstance } from 'fastify';
import { appAssets, isFresh } from '@mandate/web';
import type { Services } from '../../../services.ts';

/**
 * The owner app (/app), its script, styles, service worker, manifest and icons, as built by
 * @mandate/web once at start. No inline script or style, so the strict CSP of the security-headers
 * hook applies unchanged.
 */
export async function appPageRoutes(app: FastifyInstance, _s: Services): Promise<void> {
  // A typed trailing slash still opens the app.
  app.get('/app/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/app'));
  for (const [path, asset] of appAssets()) {
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      reply.header('content-type', asset.type).header('cache-control', asset.cache).header('etag', asset.etag);
      if (isFresh(asset, request.headers['if-none-match'])) return reply.code(304).send();
      return reply.send(asset.body);
    });
  }
}
