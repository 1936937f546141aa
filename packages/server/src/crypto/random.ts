import { createHash, randomBytes } from 'node:crypto';

/** An opaque secret: 32 random bytes, base64url. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Stored form of a bearer secret: we keep only its SHA-256, so a database leak yields no sessions. */
export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
