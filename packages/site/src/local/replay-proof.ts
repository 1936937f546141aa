import { ProtocolError } from '@mandate/protocol';

/**
 * The `iat` of a DPoP proof that `verifyPassAndProof` has already verified (signature, shape, and iat
 * within 120 s of now), for the replay cache. The protocol's `consumeJti` hook is given the jti only,
 * so the payload is read again here: the same bytes, a few microseconds.
 */
export function verifiedProofIat(dpop: string): number {
  const payload = dpop.split('.')[1];
  const claims: unknown = payload === undefined ? undefined : JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  const iat = typeof claims === 'object' && claims !== null ? (claims as { iat?: unknown }).iat : undefined;
  // Unreachable for a verified proof; refused rather than recorded with a made-up time.
  if (typeof iat !== 'number' || !Number.isSafeInteger(iat)) throw new ProtocolError('invalid_dpop', 'the DPoP proof has no integer iat');
  return iat;
}
