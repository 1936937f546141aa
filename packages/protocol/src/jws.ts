import type { JsonObject } from './shape.ts';
import { isObject } from './shape.ts';

/**
 * Structural checks on a JWS compact serialization, done before any key lookup or crypto so
 * that garbage (empty strings, JWEs with 5 segments, huge inputs) is refused cheaply and
 * uniformly. Returns null on anything that is not three non-empty base64url segments.
 */
export type CompactParts = { header: JsonObject };

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes one base64url segment holding a JSON object; null when it is anything else. */
export function decodeJsonSegment(segment: string): JsonObject | null {
  if (!SEGMENT.test(segment)) return null;
  try {
    const value: unknown = JSON.parse(utf8.decode(Buffer.from(segment, 'base64url')));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

export function splitCompact(token: unknown, maxLength: number, knownHeader?: JsonObject): CompactParts | null {
  if (typeof token !== 'string' || token.length === 0 || token.length > maxLength) return null;
  const segments = token.split('.');
  if (segments.length !== 3) return null;
  const [h, p, s] = segments;
  if (h === undefined || p === undefined || s === undefined) return null;
  if (!SEGMENT.test(p) || !SEGMENT.test(s)) return null;
  // `knownHeader`: the caller decoded this very header segment before (and it was well formed).
  const header = knownHeader ?? decodeJsonSegment(h);
  if (header === null) return null;
  return { header };
}

/** Decodes verified payload bytes (from jose) into a JSON object; null otherwise. */
export function decodeJsonBytes(bytes: Uint8Array): JsonObject | null {
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}
