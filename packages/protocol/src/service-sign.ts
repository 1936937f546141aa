import { SignJWT } from 'jose';
import type { JWTPayload } from 'jose';
import type { PassClaims, ResourcePassClaims, RevocationClaims, StepupClaims } from './claims.ts';
import { PASS_TYP, REVOCATION_TYP, STEPUP_TYP } from './claims.ts';
import type { ReceiptKeyClaims } from './receipt.ts';
import type { RevocationDeltaClaims } from './revocation-delta.ts';
import { REVOCATION_DELTA_TYP } from './revocation-delta.ts';
import { RECEIPT_KEY_TYP } from './receipt.ts';
import type { PrivateKey } from './sign.ts';

/**
 * Service-side minting, kept beside the verifiers so that the header typ and the `type` claim
 * of each kind are written by the same table they are checked against.
 */
export async function signServiceToken(
  privateKey: PrivateKey,
  header: { kid: string; typ: string },
  claims: JWTPayload,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: header.kid, typ: header.typ }).sign(privateKey);
}

export function signPass(privateKey: PrivateKey, kid: string, claims: PassClaims): Promise<string> {
  return signServiceToken(privateKey, { kid, typ: PASS_TYP }, { ...claims });
}

/** A pass for a protected resource (decisions §28): the same header as every pass. */
export function signResourcePass(privateKey: PrivateKey, kid: string, claims: ResourcePassClaims): Promise<string> {
  return signServiceToken(privateKey, { kid, typ: PASS_TYP }, { ...claims });
}

export function signStepupToken(privateKey: PrivateKey, kid: string, claims: StepupClaims): Promise<string> {
  return signServiceToken(privateKey, { kid, typ: STEPUP_TYP }, { ...claims });
}

/** A delta of the revocation list (decisions §30), signed by the same keys as snapshots. */
export function signRevocationDelta(privateKey: PrivateKey, kid: string, claims: RevocationDeltaClaims): Promise<string> {
  return signServiceToken(privateKey, { kid, typ: REVOCATION_DELTA_TYP }, { ...claims });
}

export function signRevocationSnapshot(privateKey: PrivateKey, kid: string, claims: RevocationClaims): Promise<string> {
  return signServiceToken(privateKey, { kid, typ: REVOCATION_TYP }, { ...claims });
}

export function signReceiptKeyAttestation(privateKey: PrivateKey, kid: string, claims: ReceiptKeyClaims): Promise<string> {
  return signServiceToken(privateKey, { kid, typ: RECEIPT_KEY_TYP }, { ...claims });
}
