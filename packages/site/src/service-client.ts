import type { VerifierConfig } from './config.ts';

/**
 * No verdict could be had from Mandate: unreachable, timed out, a 5xx, or an answer that is not what
 * the contract promises. Never a statement about the request, so the request is refused with 503.
 */
export class ServiceUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceUnavailableError';
  }
}

export type ServiceResponse = { status: number; headers: Headers; body: unknown };

/** Calls one Mandate endpoint with the configured fetch and timeout; the body is parsed as JSON when there is one. */
export async function callService(
  config: Pick<VerifierConfig, 'serviceUrl' | 'fetch' | 'timeoutMs'>,
  path: string,
  init: { method: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> },
): Promise<ServiceResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await config.fetch(`${config.serviceUrl}${path}`, {
      method: init.method,
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(config.timeoutMs),
      redirect: 'error', // an answer from somewhere else is no answer from Mandate
    });
  } catch (e) {
    throw new ServiceUnavailableError(`${init.method} ${path}: Mandate unreachable (${e instanceof Error ? e.message : String(e)})`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw new ServiceUnavailableError(`${init.method} ${path}: the answer could not be read (${e instanceof Error ? e.message : String(e)})`);
  }
  let body: unknown = undefined;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new ServiceUnavailableError(`${init.method} ${path}: answered ${res.status} with a body that is not JSON`);
    }
  }
  return { status: res.status, headers: res.headers, body };
}

/** Whatever was thrown, as an Error (for onError). */
export const toError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
export const isStringRecord = (v: unknown): v is Record<string, string> => isRecord(v) && Object.values(v).every((s) => typeof s === 'string');
