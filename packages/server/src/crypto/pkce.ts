import { createHash, timingSafeEqual } from 'node:crypto';

// PKCE with S256 (RFC 7636), the one method the service accepts: for its OIDC provider's code flow
// and for the operators' consent codes.

/** BASE64URL(SHA-256(code_verifier)) is always 43 characters (RFC 7636 §4.2). */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** A code_verifier: 43 to 128 unreserved characters (RFC 7636 §4.1). */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether `verifier` is the one `challenge` was made from, compared in constant time. */
export function s256Matches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
