import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError } from '../domain/errors.ts';
import { installNotFound } from './not-found.ts';
import { extraBodyProblems } from './body-checks.ts';
import { toValidationItems } from './validation.ts';

const DB_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P03', '08006', '08001', '08003']);

/**
 * SQLite's codes of the same conditions, plain and extended (better-sqlite3 reports the extended
 * one: SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_TIMEOUT, SQLITE_LOCKED_SHAREDCACHE, SQLITE_IOERR_WRITE...):
 * a lock not had in time or a failed read or write of the file. Passing unavailability, a 503,
 * never a 500.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR)(_[A-Z_]+)?$/;

export function isDatabaseDown(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (typeof e?.code === 'string' && (DB_DOWN_CODES.has(e.code) || SQLITE_UNAVAILABLE.test(e.code))) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(e?.message ?? '');
}

/** The 422 of a body that is not JSON, in the shape of a validation error. */
const invalidJson = (message: string) => ({ detail: [{ loc: ['body'], msg: `request body is not valid JSON: ${message}`, type: 'json_invalid' }] });

/**
 * One serializer for every error (decisions §10): 4xx `{detail}`, 422 `{detail: [{loc, msg, type}]}`,
 * 503 when the database is unreachable, and a generic 500 (logged with the request id) otherwise;
 * unknown addresses get 404 (not-found.ts: JSON, or the HTML 404 page for browsers outside the API).
 */
/** `onDatabaseDown`: called for each 503 of an unreachable database (the metrics count them). */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number, onDatabaseDown?: () => void): void {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    if (err instanceof AppError) {
      if (!err.expose) request.log.error({ err }, 'unexposed application error');
      return reply.code(err.status).headers(err.headers).send({ detail: err.detail, ...err.extra });
    }
    if (err.validation) {
      const part = err.validationContext ?? 'body';
      const items = toValidationItems(err.validation as ErrorObject[], part);
      return reply.code(422).send({ detail: part === 'body' ? [...items, ...extraBodyProblems(request, items)] : items });
    }
    switch (err.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(422).send(invalidJson(err.message));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send({ detail: `request body too large (limit ${bodyLimit} bytes)` });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send({ detail: 'unsupported content type: send application/json' });
    }
    if (err instanceof SyntaxError && (err as { statusCode?: number }).statusCode === 400) {
      return reply.code(422).send(invalidJson(err.message));
    }
    // PostgreSQL class 22 (data exception: a character or number it cannot store). Input checks
    // should stop such values first; this keeps any that slip through a 4xx, never a 500.
    if (typeof err.code === 'string' && /^22[0-9A-Z]{3}$/.test(err.code)) {
      request.log.warn({ code: err.code }, 'database refused a value');
      return reply.code(400).send({ detail: 'the request holds a value that cannot be stored (an invalid character or an out-of-range number)' });
    }
    if (isDatabaseDown(err)) {
      request.log.error({ err }, 'database unreachable');
      onDatabaseDown?.();
      return reply.code(503).send({ detail: 'service unavailable' });
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) return reply.code(status).send({ detail: err.message });
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ detail: 'internal error', request_id: request.id });
  });

  installNotFound(app);
}
