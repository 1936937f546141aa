import { randomBytes } from 'node:crypto';

export type IdPrefix = 'u' | 'ag' | 't' | 'gr' | 'p' | 'op' | 'cn' | 'dev' | 'n' | 'c' | 'rc' | 'tk' | 'pc';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** Lower-case RFC 4648 base32 without padding. */
export function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `prefix_` plus 128 random bits in base32 (decisions §1: never sequential, at least 96 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base32(randomBytes(16))}`;
}

/** Shape check for ids arriving in paths and bodies; anything else is simply "not found". */
export function looksLikeId(prefix: IdPrefix, value: string): boolean {
  return value.length <= 64 && value.startsWith(`${prefix}_`) && /^[a-z0-9_]+$/.test(value);
}
