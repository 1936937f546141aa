import type { FastifyInstance } from 'fastify';

/**
 * JSON bodies, with one relaxation: an empty body is "no body" rather than an error, so that
 * endpoints whose body is optional accept a bare POST. Endpoints that need a body say so in their
 * schema and answer 422.
 */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      const err = e as Error & { statusCode?: number; code?: string };
      err.statusCode = 400;
      err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(err, undefined);
    }
  });
}
