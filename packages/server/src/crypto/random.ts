import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** An opaque secret: 32 random bytes, base64url. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Stored form of a bearer secret: we keep only its SHA-256, so a database leak yields no sessions. */
export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
