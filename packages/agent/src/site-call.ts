import { createDpopProof, type EcP256PublicJwk, type PrivateKey } from '@mandate/protocol';
import type { FetchLike } from './client/http.ts';
import type { Pass } from './passes/pass-keeper.ts';

/** A request body the SDK can send twice (a retry after a step-up or a renewed pass needs it again). */
export type ReplayableBody = string | Uint8Array<ArrayBuffer> | URLSearchParams | null;

export type SiteRequestInit = Omit<RequestInit, 'body'> & { body?: ReplayableBody | undefined };

/**
 * What a site answered with a JSON error body, e.g. `{"error": "stepup_required", "action": "...",
 * "summary": "..."}`: with stepup_required, the action to approve and the text the site suggests the
 * owner reads.
 */
export type SiteError = { error: string; action?: string | undefined; summary?: string | undefined };

/**
 * Sends one request to a site as the site-side contract asks: `Authorization: Bearer <pass>`, a
 * DPoP proof made for this very method and URL (fresh `jti` and `iat`, so never reused), and the
 * step-up token in `X-Service-Stepup` when there is one; with Web Bot Auth set up, the request's
 * HTTP message signature (RFC 9421, covering `@authority` and `Signature-Agent`).
 */
export async function sendToSite(
  fetchImpl: FetchLike,
  key: { privateKey: PrivateKey; publicJwk: EcP256PublicJwk },
  url: string,
  init: SiteRequestInit,
  pass: Pass,
  stepupToken?: string,
  /** Web Bot Auth: the `Signature-Agent`, `Signature-Input` and `Signature` of this request (wba.ts). */
  signatureHeaders?: (url: string) => Record<string, string>,
): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${pass.accessToken}`);
  headers.set('dpop', await createDpopProof(key.privateKey, key.publicJwk, { htm: method, htu: url, accessToken: pass.accessToken }));
  // Without a token of ours, a step-up header the caller set (one collected earlier) goes as it is.
  if (stepupToken) headers.set('x-service-stepup', stepupToken);
  // Signed per send (a fresh nonce and created), so a retry never repeats a signature.
  if (signatureHeaders) for (const [name, value] of Object.entries(signatureHeaders(url))) headers.set(name, value);
  // A redirect would replay the pass and proof to another URL, where the proof is worthless anyway.
  return fetchImpl(url, { ...init, method, headers, body: init.body ?? null, redirect: init.redirect ?? 'manual' });
}

/** The site's `{"error": ...}` body of a 401/403, read from a clone so the caller can still read it. */
export async function siteError(res: Response): Promise<SiteError | undefined> {
  if (res.status !== 401 && res.status !== 403) return undefined;
  try {
    const body = (await res.clone().json()) as Record<string, unknown>;
    if (typeof body?.['error'] !== 'string') return undefined;
    const { action, summary } = body;
    return { error: body['error'], action: typeof action === 'string' ? action : undefined, summary: typeof summary === 'string' ? summary : undefined };
  } catch {
    return undefined;
  }
}
