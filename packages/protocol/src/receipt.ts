/**
 * Receipts (decisions §29): what a site keeps to prove later, offline and without trusting a log,
 * that the owner's own passkey approved exactly one action with exactly those details. A receipt is
 * the WebAuthn assertion the owner's device made, the values its challenge commits to, the passkey's
 * public key and the service's attestation that this key is that person's passkey.
 */
import { isDetailsDigest } from './approval-details.ts';
import type { JsonObject } from './shape.ts';
import { isObject } from './shape.ts';

/** Header typ of the service's attestation that a passkey key belongs to a person. */
export const RECEIPT_KEY_TYP = 'receipt-key+jwt';

/** The passkey's public key as a JWK, with the algorithm the key signs with pinned in `alg`. */
export type CredentialKey =
  | { kty: 'EC'; crv: 'P-256'; x: string; y: string; alg: 'ES256' }
  | { kty: 'RSA'; n: string; e: string; alg: 'RS256' }
  | { kty: 'OKP'; crv: 'Ed25519'; x: string; alg: 'EdDSA' };

/** The assertion as the owner's authenticator made it; every member is base64url (unpadded). */
export interface ReceiptWebauthn {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  /** As WebAuthn gives it: DER for ES256, PKCS #1 v1.5 for RS256, raw for EdDSA. */
  signature: string;
}

/** `GET /api/v1/receipts/{txn_id}`. */
export interface Receipt {
  v: 1;
  txn: string;
  aud: string;
  action: string;
  /** null for an approval without details. */
  details_digest: string | null;
  user: string;
  nonce: string;
  /** ISO 8601. */
  approved_at: string;
  webauthn: ReceiptWebauthn;
  credential_key: CredentialKey;
  /** A JWT (typ receipt-key+jwt) by the service binding `user`, `credential_id`, `credential_key`, `registered_at`. */
  attestation: string;
}

/** Claims of the attestation JWT. It has no `exp`: it states a fact about a key, to be checked years later. */
export interface ReceiptKeyClaims {
  iss: string;
  type: 'receipt-key';
  iat: number;
  user: string;
  credential_id: string;
  credential_key: CredentialKey;
  /** ISO 8601: when the passkey was registered. */
  registered_at: string;
}

/** Unpadded base64url of at least one byte. */
const B64U = /^[A-Za-z0-9_-]+$/;
/** Bounds that any real value stays well within; larger input is refused before decoding. */
const MAX_FIELD = 256;
const MAX_B64U = 16 * 1024;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

export function isB64u(value: unknown, max = MAX_B64U): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max && B64U.test(value);
}

export function isIsoTime(value: unknown): value is string {
  return typeof value === 'string' && ISO_TIME.test(value) && Number.isFinite(Date.parse(value));
}

const isField = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD;

/** The credential key's shape (whether it is a usable key is for node:crypto to say), or null. */
export function parseCredentialKey(value: unknown): CredentialKey | null {
  if (!isObject(value) || 'd' in value || 'p' in value) return null;
  const { kty, alg } = value;
  if (kty === 'EC' && alg === 'ES256' && value['crv'] === 'P-256' && isB64u(value['x'], 43) && isB64u(value['y'], 43)) {
    return { kty, crv: 'P-256', x: value['x'], y: value['y'], alg };
  }
  if (kty === 'RSA' && alg === 'RS256' && isB64u(value['n'], 1024) && isB64u(value['e'], 16)) {
    return { kty, n: value['n'], e: value['e'], alg };
  }
  if (kty === 'OKP' && alg === 'EdDSA' && value['crv'] === 'Ed25519' && isB64u(value['x'], 43)) {
    return { kty, crv: 'Ed25519', x: value['x'], alg };
  }
  return null;
}

/** A receipt's shape, or the name of its first bad member. Unknown members are refused: a receipt is exact. */
export function parseReceipt(value: unknown): Receipt | string {
  if (!isObject(value)) return 'the receipt must be a JSON object';
  const known = ['v', 'txn', 'aud', 'action', 'details_digest', 'user', 'nonce', 'approved_at', 'webauthn', 'credential_key', 'attestation'];
  const extra = Object.keys(value).find((k) => !known.includes(k));
  if (extra !== undefined) return `${extra} is not a member of a receipt`;
  const r = value as JsonObject;
  if (r['v'] !== 1) return 'v must be 1';
  for (const k of ['txn', 'aud', 'action', 'user'] as const) if (!isField(r[k])) return `${k} must be a string of 1 to ${MAX_FIELD} characters`;
  if (r['details_digest'] !== null && !isDetailsDigest(r['details_digest'])) return 'details_digest must be base64url SHA-256 or null';
  if (!isB64u(r['nonce'], 64)) return 'nonce must be base64url';
  if (!isIsoTime(r['approved_at'])) return 'approved_at must be an ISO 8601 UTC time';
  const w = r['webauthn'];
  if (!isObject(w)) return 'webauthn must be an object';
  for (const k of ['credential_id', 'authenticator_data', 'client_data_json', 'signature'] as const) if (!isB64u(w[k])) return `webauthn.${k} must be base64url`;
  const key = parseCredentialKey(r['credential_key']);
  if (key === null) return 'credential_key must be a public JWK: EC P-256 (ES256), RSA (RS256) or OKP Ed25519 (EdDSA), with its alg';
  if (typeof r['attestation'] !== 'string' || r['attestation'].length === 0) return 'attestation must be a JWT';
  return {
    v: 1,
    txn: r['txn'] as string,
    aud: r['aud'] as string,
    action: r['action'] as string,
    details_digest: r['details_digest'] as string | null,
    user: r['user'] as string,
    nonce: r['nonce'] as string,
    approved_at: r['approved_at'] as string,
    webauthn: {
      credential_id: w['credential_id'] as string,
      authenticator_data: w['authenticator_data'] as string,
      client_data_json: w['client_data_json'] as string,
      signature: w['signature'] as string,
    },
    credential_key: key,
    attestation: r['attestation'],
  };
}
