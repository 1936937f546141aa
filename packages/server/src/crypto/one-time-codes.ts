/**
 * One-time codes for phones and account recovery (decisions §14): their random making, their
 * stored hashes and the constant-time comparison of those. Kept here, with the other hashing, so no
 * domain code compares secrets by hand.
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

/** A code of `digits` decimal digits (an SMS code: 6), uniform, from the system CSPRNG. */
export function randomDigits(digits: number): string {
  let out = '';
  for (let i = 0; i < digits; i++) out += String(randomInt(10));
  return out;
}

/** RFC 4648 base32 alphabet, without the padding: no 0/1/8/9, so 0/O and 1/I/L are never confused. */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** `length` base32 characters (5 bits each): a recovery code of 12 carries 60 bits. */
export function randomBase32(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE32[randomInt(32)];
  return out;
}

/**
 * The stored form of a code: SHA-256 (hex) of `<scope>:<code>`. The scope (the code's row id, or the
 * account for recovery codes) makes equal codes of different rows hash apart.
 */
export const codeHash = (scope: string, code: string): string => createHash('sha256').update(`${scope}:${code}`).digest('hex');

/** Two hex hashes compared in constant time (equal length; a malformed one is simply unequal). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
