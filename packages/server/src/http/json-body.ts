import type { FastifyInstance } from 'fastify';

/** Where a NUL character sits in a parsed JSON value, or undefined. */
function findNul(value: unknown, path: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return [...path, k];
      const found = findNul(v, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}

function badJson(message: string): Error {
  const err = new Error(message) as Error & { statusCode?: number; code?: string };
  err.statusCode = 400;
  err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
  return err;
}

/**
 * JSON bodies, with one relaxation: an empty body is "no body" rather than an error, so that
 * endpoints whose body is optional accept a bare POST. Endpoints that need a body say so in their
 * schema and answer 422. A NUL character anywhere in the body is refused here (422): no field has a
 * use for it and PostgreSQL cannot store it in text.
 */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return done(badJson((e as Error).message), undefined);
    }
    const nulAt = findNul(value);
    if (nulAt) return done(badJson(`NUL character (\\u0000) at ${['body', ...nulAt].join('.')}; it is not allowed anywhere`), undefined);
    done(null, value);
  });
}

/** Query strings and path parameters with a NUL character get 422 before any route sees them. */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request, reply) => {
    for (const [part, values] of [['query', request.query], ['path', request.params]] as const) {
      if (!values || typeof values !== 'object') continue;
      for (const [key, v] of Object.entries(values as Record<string, unknown>)) {
        const strings = Array.isArray(v) ? v : [v];
        if (strings.some((s) => typeof s === 'string' && s.includes('\u0000'))) {
          return reply.code(422).send({ detail: [{ loc: [part, key], msg: 'NUL character (\\u0000) is not allowed', type: 'string_pattern_mismatch' }] });
        }
      }
    }
    return undefined;
  });
}
