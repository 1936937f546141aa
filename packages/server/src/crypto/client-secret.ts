import { createHash, timingSafeEqual } from 'node:crypto';
import { randomToken } from './random.ts';

/**
 * OIDC client secrets: 32 random bytes (base64url), shown once, stored as SHA-256. A plain hash is
 * enough here, unlike for passwords: 256 random bits cannot be guessed, so there is nothing for a
 * slow hash to slow down, and the token endpoint stays cheap.
 */
export const newClientSecret = (): string => randomToken(32);

export const hashClientSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Compared against when there is no stored hash, so that "no such client" costs what a wrong secret does. */
const NOTHING_STORED = hashClientSecret(randomToken(32));

/**
 * Whether `presented` is the secret behind `storedHash` (hex SHA-256), in time independent of where
 * they differ. The presented secret is hashed first, so both sides are 32 bytes whatever was sent.
 * With no stored hash (unknown or public client) the same work is done and the answer is false.
 */
export function clientSecretMatches(presented: string, storedHash: string | null): boolean {
  const given = createHash('sha256').update(presented, 'utf8').digest();
  const stored = Buffer.from(storedHash ?? NOTHING_STORED, 'hex');
  if (stored.length !== given.length) return false;
  return timingSafeEqual(given, stored) && storedHash !== null;
}

/** The public verification token a site publishes (not a secret: it proves control of the site). */
export const newVerificationToken = (): string => randomToken(18);
