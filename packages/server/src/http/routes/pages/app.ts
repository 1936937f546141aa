import type { FastifyInstance } from 'fastify';
import { appAssets, isFresh, takeoverPage } from '@mandate/web';
import type { Services } from '../../../services.ts';

/**
 * The owner app (/app), its script, styles, service worker, manifest and icons, as built by
 * @mandate/web once at start. No inline script or style, so the strict CSP of the security-headers
 * hook applies unchanged.
 */
export async function appPageRoutes(app: FastifyInstance, s: Services): Promise<void> {
  // A typed trailing slash still opens the app.
  app.get('/app/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/app'));
  // The take-over page (decisions §21): only for the signed-in owner of an open take-over; others
  // are sent to the app to sign in, and a take-over that is not theirs or has ended is 404.
  app.get<{ Params: { sid: string } }>('/app/takeover/:sid', { schema: { hide: true } }, async (request, reply) => {
    const owner = await s.auth.optional(request).catch(() => undefined);
    if (!owner) return reply.redirect('/app');
    await s.takeovers.ownedOpen(owner.user.id, request.params.sid);
    const page = takeoverPage();
    return reply.header('content-type', page.type).header('cache-control', 'no-store').send(page.body);
  });
  for (const [path, asset] of appAssets()) {
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      reply.header('content-type', asset.type).header('cache-control', asset.cache).header('etag', asset.etag);
      if (isFresh(asset, request.headers['if-none-match'])) return reply.code(304).send();
      return reply.send(asset.body);
    });
  }
}
