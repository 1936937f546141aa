import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { ErrorBody } from '../../schemas/common.ts';
import { unchanged } from './sdk-downloads.ts';

/**
 * The WordPress plugin (decisions §23): the newest zip the build made from integrations/wordpress,
 * for Plugins → Add New → Upload Plugin (docs/sites/wordpress.md). HEAD answers the same headers.
 */
export async function wordpressDownloadRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.get('/download/wordpress', {
    schema: {
      summary: 'The WordPress plugin as a zip',
      description: 'The Mandate plugin for WordPress (PHP 8.1 or later): REST API guard with cloud verify, step-ups, "Sign in with Mandate" for agents, back-channel logout and CIBA confirmation; see docs/sites/wordpress.md. The newest version built with the service (`npm run build`), saved as `mandate-wordpress-<version>.zip`. `Content-Digest` (RFC 9530) carries its SHA-256; `If-None-Match` with its ETag answers 304. 404 when the build did not make it.',
      tags: ['downloads'],
      response: {
        200: { description: 'mandate-wordpress-<version>.zip', content: { 'application/zip': { schema: Type.String({ format: 'binary' }) } } },
        304: { description: 'unchanged since the ETag sent in If-None-Match' },
        404: ErrorBody,
      },
    },
  }, async (request, reply) => {
    const zip = await s.wordpressZips.newest();
    reply.header('etag', zip.etag).header('cache-control', 'no-cache');
    if (unchanged(request.headers['if-none-match'], zip.etag)) return reply.code(304).send();
    return reply
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="${zip.filename}"`)
      .header('content-digest', zip.contentDigest)
      .send(zip.body);
  });
}
