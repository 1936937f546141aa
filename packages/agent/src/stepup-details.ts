import { type ApprovalDetails, detailsDigestOf, isDetailsSummary } from '@mandate/protocol';
import type { ReplayableBody } from './site-call.ts';

const JSON_TYPE = /^\s*application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** The JSON value of a body sent with a JSON content type; undefined for any other body. */
function jsonBodyOf(headers: Headers, body: ReplayableBody | undefined): { json: unknown } | undefined {
  if (!JSON_TYPE.test(headers.get('content-type') ?? '')) return undefined;
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return undefined;
  try {
    const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
    return { json: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * The `details` to ask the owner's step-up with, for a request about to be sent again with the
 * step-up token (decisions §28, §29). A JSON body (JSON content type, a string or bytes that parse)
 * gives `digest` = base64url SHA-256 of its RFC 8785 canonical JSON, the digest a site that binds
 * the step-up to its body computes from the same bytes; the summary is the site's suggestion, else
 * the action. Any other body, or none, gives no details: the approval is for the action alone.
 */
export function stepupDetailsFor(
  request: { headers?: RequestInit['headers'] | undefined; body?: ReplayableBody | undefined },
  suggested: string | undefined,
  action: string,
): ApprovalDetails | undefined {
  const body = jsonBodyOf(new Headers(request.headers), request.body);
  if (body === undefined) return undefined;
  const summary = suggested !== undefined && isDetailsSummary(suggested) ? suggested : action;
  if (!isDetailsSummary(summary)) return undefined;
  return { summary, digest: detailsDigestOf(body.json) };
}
