/**
 * `verifyReceipt` (decisions §29): checks a receipt with nothing but the service's published keys
 * (JWKS) and its origin, so a site or an auditor can prove an approval offline, years later, without
 * trusting a log. What it proves: the passkey the service attested as this person's signed this
 * challenge, which commits to the txn, site, action, details digest, person and nonce.
 */
import { approvalChallenge, canonicalJson } from './approval-details.ts';
import { ProtocolError } from './errors.ts';
import type { ServiceKeys } from './keys.ts';
import type { CredentialKey, Receipt, ReceiptKeyClaims } from './receipt.ts';
import { RECEIPT_KEY_TYP, isB64u, isIsoTime, parseCredentialKey, parseReceipt } from './receipt.ts';
import { verifyServiceToken } from './service-token.ts';
import { isInt, isNonEmptyString } from './shape.ts';
import { assertionSignatureValid, importCredentialKey, parseAuthenticatorData, parseClientData, rpIdHash } from './webauthn-assertion.ts';

/** One code per check, so a site can log why a receipt was refused. */
export const RECEIPT_ERROR_CODES = [
  'receipt_malformed',
  'receipt_unexpected',
  'attestation_invalid',
  'attestation_mismatch',
  'credential_key_invalid',
  'client_data_invalid',
  'client_data_type',
  'challenge_mismatch',
  'origin_mismatch',
  'rp_id_mismatch',
  'user_not_present',
  'user_not_verified',
  'signature_invalid',
  'approved_before_registration',
] as const;

export type ReceiptErrorCode = (typeof RECEIPT_ERROR_CODES)[number];

/** The only error verifyReceipt throws for a bad receipt; `message` says which check failed and never echoes key or signature bytes. */
export class ReceiptError extends Error {
  readonly code: ReceiptErrorCode;
  constructor(code: ReceiptErrorCode, message: string) {
    super(message);
    this.name = 'ReceiptError';
    this.code = code;
  }
}

/** Values a site may pin: the receipt must be for exactly these. */
export interface ReceiptExpectation {
  txn?: string;
  aud?: string;
  action?: string;
  /** null pins "an approval without details". */
  details_digest?: string | null;
  user?: string;
}

export interface VerifyReceiptOptions {
  /** The service's JWKS (`GET /api/v1/jwks`) as it was when the receipt was made, or a key resolver. */
  jwks: ServiceKeys;
  /** The service's origin, e.g. `https://mandate.example`: the passkey's origin; its host is the RP id. */
  origin: string;
  /** The attestation's `iss`: the service's base URL. Default: `origin` (a service at the root of its host). */
  issuer?: string;
  expected?: ReceiptExpectation;
}

/** What a valid receipt establishes. */
export interface VerifiedReceipt {
  receipt: Receipt;
  /** When the passkey was registered, as the service attests. */
  registered_at: string;
  /** The authenticator's signature counter at this assertion (0 for authenticators that keep none). */
  sign_count: number;
}

/**
 * Checks a receipt: its shape, the pinned values, the attestation (typ receipt-key+jwt, signed by a
 * key of `jwks`, binding this user, credential id and key), the challenge recomputed from the
 * receipt, the client data (type webauthn.get, that challenge, the origin, not cross-origin), the
 * authenticator data (RP id hash of the origin's host, user present, user verified), the signature
 * with the credential key, and that the passkey existed when the approval was made.
 * Throws ReceiptError (a code per check); errors a key resolver throws propagate.
 */
export async function verifyReceipt(value: unknown, o: VerifyReceiptOptions): Promise<VerifiedReceipt> {
  const origin = serviceOrigin(o.origin);
  const parsed = parseReceipt(value);
  if (typeof parsed === 'string') throw new ReceiptError('receipt_malformed', parsed);
  const r = parsed;
  checkExpected(r, o.expected ?? {});

  const claims = await verifiedAttestation(r.attestation, o.jwks, o.issuer ?? origin.origin);
  if (claims.user !== r.user) throw new ReceiptError('attestation_mismatch', 'the attestation is for another person');
  if (claims.credential_id !== r.webauthn.credential_id) throw new ReceiptError('attestation_mismatch', 'the attestation is for another passkey');
  if (canonicalJson(claims.credential_key) !== canonicalJson(r.credential_key)) throw new ReceiptError('attestation_mismatch', 'the attestation is for another key');

  const key = importCredentialKey(r.credential_key);
  if (key === null) throw new ReceiptError('credential_key_invalid', 'credential_key is not a valid public key of its type');

  const clientDataJson = Buffer.from(r.webauthn.client_data_json, 'base64url');
  const clientData = parseClientData(clientDataJson);
  if (clientData === null) throw new ReceiptError('client_data_invalid', 'client_data_json is not a JSON object');
  if (clientData.type !== 'webauthn.get') throw new ReceiptError('client_data_type', 'client_data_json.type must be webauthn.get');
  const challenge = approvalChallenge({ txn: r.txn, aud: r.aud, action: r.action, detailsDigest: r.details_digest, user: r.user, nonce: r.nonce });
  if (clientData.challenge !== challenge) throw new ReceiptError('challenge_mismatch', 'the passkey signed another challenge than this receipt commits to');
  if (clientData.origin !== origin.origin) throw new ReceiptError('origin_mismatch', 'the passkey was used at another origin');
  if (clientData.crossOrigin === true) throw new ReceiptError('origin_mismatch', 'the passkey was used in a cross-origin frame');

  const authenticatorData = Buffer.from(r.webauthn.authenticator_data, 'base64url');
  const auth = parseAuthenticatorData(authenticatorData);
  if (auth === null) throw new ReceiptError('receipt_malformed', 'webauthn.authenticator_data is shorter than 37 bytes');
  if (!auth.rpIdHash.equals(rpIdHash(origin.hostname))) throw new ReceiptError('rp_id_mismatch', 'the passkey belongs to another relying party');
  if (!auth.userPresent) throw new ReceiptError('user_not_present', 'the authenticator did not see the user present');
  if (!auth.userVerified) throw new ReceiptError('user_not_verified', 'the authenticator did not verify the user');

  const signature = Buffer.from(r.webauthn.signature, 'base64url');
  if (!assertionSignatureValid(key, r.credential_key.alg, authenticatorData, clientDataJson, signature)) {
    throw new ReceiptError('signature_invalid', 'the assertion signature does not verify with credential_key');
  }
  if (Date.parse(r.approved_at) < Date.parse(claims.registered_at)) {
    throw new ReceiptError('approved_before_registration', 'approved_at is earlier than the passkey registration');
  }
  return { receipt: r, registered_at: claims.registered_at, sign_count: auth.signCount };
}

function serviceOrigin(value: unknown): URL {
  let url: URL | null = null;
  try {
    if (typeof value === 'string') url = new URL(value);
  } catch {
    url = null;
  }
  if (url === null || typeof value !== 'string' || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== value.replace(/\/$/, '')) {
    throw new TypeError('verifyReceipt: origin must be the service origin, e.g. https://mandate.example');
  }
  return url;
}

function checkExpected(r: Receipt, expected: ReceiptExpectation): void {
  for (const k of ['txn', 'aud', 'action', 'details_digest', 'user'] as const) {
    if (expected[k] !== undefined && expected[k] !== r[k]) throw new ReceiptError('receipt_unexpected', `the receipt is for another ${k}`);
  }
}

async function verifiedAttestation(token: string, keys: ServiceKeys, issuer: string): Promise<ReceiptKeyClaims> {
  let payload;
  try {
    // No exp: the attestation states which key a person registered, and is checked long after.
    payload = await verifyServiceToken(token, { keys, issuer, now: Math.floor(Date.now() / 1000), typ: RECEIPT_KEY_TYP, type: 'receipt-key', checkExp: false });
  } catch (e) {
    if (e instanceof ProtocolError) throw new ReceiptError('attestation_invalid', `attestation: ${e.message}`);
    throw e;
  }
  const key: CredentialKey | null = parseCredentialKey(payload['credential_key']);
  const { user, credential_id: credentialId, registered_at: registeredAt, iat } = payload;
  if (!isNonEmptyString(user) || !isB64u(credentialId) || key === null || !isIsoTime(registeredAt) || !isInt(iat)) {
    throw new ReceiptError('attestation_invalid', 'attestation: the claims user, credential_id, credential_key, registered_at and iat are required');
  }
  return { iss: issuer, type: 'receipt-key', iat, user, credential_id: credentialId, credential_key: key, registered_at: registeredAt };
}
