import type { HeaderSource } from './types.ts';

/** The step-up header of decisions §11. */
export const STEPUP_HEADER = 'x-service-stepup';
/** The same header as agents written for the original system send it; accepted beside ours. */
export const LEGACY_STEPUP_HEADER = 'x-authyouragent-stepup';

/** The same bounds as Mandate's verify endpoint, so both modes refuse oversized input alike. */
export const MAX_TOKEN_LENGTH = 16 * 1024;

/** Looked up once: reading the global on every header lookup costs more than the lookup. */
const HeadersClass: typeof Headers | undefined = typeof Headers === 'undefined' ? undefined : Headers;

type HeaderValue = { kind: 'none' } | { kind: 'one'; value: string } | { kind: 'many' };

/** One header, case-insensitively; several values (repeated header) are reported as such, never joined. */
export function header(headers: HeaderSource, name: string): HeaderValue {
  const lower = name.toLowerCase();
  let raw: string | string[] | null | undefined;
  if (HeadersClass !== undefined && headers instanceof HeadersClass) {
    raw = headers.get(lower);
  } else {
    const record = headers as Record<string, string | string[] | undefined>;
    raw = record[lower];
    if (raw === undefined) {
      for (const key of Object.keys(record)) {
        if (key.toLowerCase() === lower) {
          raw = record[key];
          break;
        }
      }
    }
  }
  if (raw === undefined || raw === null) return { kind: 'none' };
  if (Array.isArray(raw)) {
    if (raw.length === 0) return { kind: 'none' };
    if (raw.length > 1) return { kind: 'many' };
    raw = raw[0] ?? '';
  }
  const value = raw.trim();
  return value === '' ? { kind: 'none' } : { kind: 'one', value };
}

/**
 * The step-up token, from `X-Service-Stepup` or `X-AuthYourAgent-Stepup`. Both headers at once, or
 * either repeated, is `many`: a request carries exactly one step-up token.
 */
export function stepupTokenOf(headers: HeaderSource): HeaderValue {
  const ours = header(headers, STEPUP_HEADER);
  const legacy = header(headers, LEGACY_STEPUP_HEADER);
  if (ours.kind === 'none') return legacy;
  if (legacy.kind === 'none') return ours;
  return { kind: 'many' };
}

/**
 * The pass from `Authorization: Bearer <pass>` (or the RFC 9449 scheme `DPoP <pass>`);
 * undefined when absent or malformed.
 */
export function accessTokenOf(headers: HeaderSource): string | undefined {
  const h = header(headers, 'authorization');
  if (h.kind !== 'one') return undefined;
  const m = /^(bearer|dpop)\s+(\S+)$/i.exec(h.value);
  return m?.[2];
}
