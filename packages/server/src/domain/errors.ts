/**
 * The one error class of the service. `status` is the HTTP status the error maps to; `detail` is
 * shown to the caller when `expose` (every 4xx); `extra` adds documented fields such as `next_step`
 * or `retry_after`. Anything that is not an AppError becomes a generic 500 with a request id.
 */
export class AppError extends Error {
  readonly expose: boolean;
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.expose = status < 500 || status === 503;
  }
}

export const badRequest = (detail: string, extra?: Record<string, unknown>) => new AppError(400, detail, extra);
export const unauthorized = (detail = 'not signed in', extra?: Record<string, unknown>) => new AppError(401, detail, extra);
export const forbidden = (detail: string, extra?: Record<string, unknown>) => new AppError(403, detail, extra);
export const notFound = (detail = 'not found') => new AppError(404, detail);
export const conflict = (detail: string, extra?: Record<string, unknown>) => new AppError(409, detail, extra);
export const unavailable = () => new AppError(503, 'service unavailable');

/** 429 with the shape of decisions §10 and a Retry-After header. */
export function rateLimited(retryAfterSec: number): AppError {
  const s = Math.max(1, Math.ceil(retryAfterSec));
  return new AppError(429, 'rate limit exceeded', { retry_after: s }, { 'retry-after': String(s) });
}
