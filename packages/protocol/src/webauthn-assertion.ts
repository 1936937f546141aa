/**
 * The pieces of a WebAuthn assertion a receipt verifier reads (W3C WebAuthn Level 2 §6.1, §7.2),
 * with node:crypto only: the authenticator data's RP id hash and flags, the client data, and the
 * signature over authenticatorData ‖ SHA-256(clientDataJSON).
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { CredentialKey } from './receipt.ts';
import { isObject } from './shape.ts';

/** rpIdHash (32) + flags (1) + signCount (4). */
const AUTHENTICATOR_DATA_MIN = 37;
const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

export interface AuthenticatorData {
  rpIdHash: Buffer;
  userPresent: boolean;
  userVerified: boolean;
  signCount: number;
}

export function parseAuthenticatorData(bytes: Buffer): AuthenticatorData | null {
  if (bytes.length < AUTHENTICATOR_DATA_MIN) return null;
  const flags = bytes[32] ?? 0;
  return {
    rpIdHash: bytes.subarray(0, 32),
    userPresent: (flags & FLAG_USER_PRESENT) !== 0,
    userVerified: (flags & FLAG_USER_VERIFIED) !== 0,
    signCount: bytes.readUInt32BE(33),
  };
}

export function rpIdHash(rpId: string): Buffer {
  return createHash('sha256').update(rpId, 'utf8').digest();
}

export interface ClientData {
  type: unknown;
  challenge: unknown;
  origin: unknown;
  crossOrigin: unknown;
}

/** clientDataJSON as the browser wrote it, or null when it is not a UTF-8 JSON object. */
export function parseClientData(bytes: Buffer): ClientData | null {
  try {
    const data: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    if (!isObject(data)) return null;
    return { type: data['type'], challenge: data['challenge'], origin: data['origin'], crossOrigin: data['crossOrigin'] };
  } catch {
    return null;
  }
}

/** The credential key as a node:crypto key, or null when it is not a valid public key of its type. */
export function importCredentialKey(jwk: CredentialKey): KeyObject | null {
  try {
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    const expected = jwk.kty === 'EC' ? 'ec' : jwk.kty === 'RSA' ? 'rsa' : 'ed25519';
    if (key.asymmetricKeyType !== expected) return null;
    // RSA keys under 2048 bits are refused: too weak to prove anything years later.
    if (expected === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return null;
    return key;
  } catch {
    return null;
  }
}

/** The assertion signature check: ES256 (DER, as WebAuthn gives it), RS256 (PKCS #1 v1.5) or EdDSA. */
export function assertionSignatureValid(key: KeyObject, alg: CredentialKey['alg'], authenticatorData: Buffer, clientDataJson: Buffer, signature: Buffer): boolean {
  const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJson).digest()]);
  try {
    if (alg === 'EdDSA') return verify(null, signed, key, signature);
    if (alg === 'ES256') return verify('sha256', signed, { key, dsaEncoding: 'der' }, signature);
    return verify('sha256', signed, key, signature);
  } catch {
    return false;
  }
}
