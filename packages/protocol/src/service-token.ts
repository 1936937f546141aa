import { compactVerify } from 'jose';
import type { VerifyErrorCode } from './errors.ts';
import { ProtocolError } from './errors.ts';
import { decodeJsonBytes, splitCompact } from './jws.ts';
import type { ServiceKeys, VerificationKey } from './keys.ts';
import { MAX_KID_LENGTH, toResolver, toVerifyKey } from './keys.ts';
import type { JsonObject } from './shape.ts';
import { isInt, isNonEmptyString } from './shape.ts';

export type ServiceTokenOptions = {
  keys: ServiceKeys;
  /** The service base URL, compared exactly (no trailing-slash tolerance). */
  issuer: string;
  /** Unix seconds. */
  now: number;
  /** Expected header typ, e.g. PASS_TYP. */
  typ: string;
  /** Expected `type` claim, e.g. 'access'. */
  type: string;
  /** Codes for "not a valid token of this kind" and "expired"; invalid_token / token_expired by default. */
  codes?: { invalid: VerifyErrorCode; expired: VerifyErrorCode };
  /** When false, `exp` is neither required nor enforced (revocation snapshots, old passes in reports). Default true. */
  checkExp?: boolean;
  /** Longest token accepted, in characters. Default 16 KiB. */
  maxLength?: number;
};

const DEFAULT_MAX_LENGTH = 16 * 1024;

/**
 * Verifies a token the service signed (pass, step-up token, revocation JWT): structure, header
 * typ / alg ES256 / kid, signature with the key the kid names, `iss`, the `type` claim and `exp`.
 * Returns the verified payload; the caller checks the claim shapes of its kind.
 *
 * Throws only ProtocolError, except that errors thrown by a key resolver propagate.
 */
export async function verifyServiceToken(token: unknown, o: ServiceTokenOptions): Promise<JsonObject> {
  return (await verifyServiceTokenWithKey(token, o)).payload;
}

/** A verified token's payload, with the `kid` and the key (as the resolver returned it) that verified it. */
export type VerifiedServiceToken = { payload: JsonObject; kid: string; key: VerificationKey };

/** verifyServiceToken, also telling which key verified the token (the verified-pass cache keeps it). */
export async function verifyServiceTokenWithKey(token: unknown, o: ServiceTokenOptions): Promise<VerifiedServiceToken> {
  const invalid = o.codes?.invalid ?? 'invalid_token';
  const expired = o.codes?.expired ?? 'token_expired';
  if (!isNonEmptyString(o.issuer) || !Number.isFinite(o.now)) {
    throw new ProtocolError('invalid_request', 'verifier misconfigured: issuer and now are required');
  }

  const parts = splitCompact(token, o.maxLength ?? DEFAULT_MAX_LENGTH);
  if (parts === null || typeof token !== 'string') {
    throw new ProtocolError(invalid, 'the token is not a well-formed JWS');
  }
  const { typ, alg, kid } = parts.header;
  if (typ !== o.typ) throw new ProtocolError(invalid, `the token header typ must be ${o.typ}`);
  if (alg !== 'ES256') throw new ProtocolError(invalid, 'the token alg must be ES256');
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) {
    throw new ProtocolError(invalid, 'the token header kid is missing or malformed');
  }

  const resolved: VerificationKey | undefined = await toResolver(o.keys)(kid);
  if (resolved === undefined) throw new ProtocolError(invalid, 'the token is signed with an unknown key');

  let payloadBytes: Uint8Array;
  try {
    const key = await toVerifyKey(resolved);
    // algorithms pins ES256 inside jose too, so a resolver key can never be used with another alg.
    payloadBytes = (await compactVerify(token, key, { algorithms: ['ES256'] })).payload;
  } catch {
    throw new ProtocolError(invalid, 'the token signature is invalid');
  }
  const payload = decodeJsonBytes(payloadBytes);
  if (payload === null) throw new ProtocolError(invalid, 'the token payload is not a JSON object');

  if (payload['iss'] !== o.issuer) throw new ProtocolError(invalid, 'the token was issued by another issuer');
  // The type claim is checked beside the header typ: both must name the expected kind.
  if (payload['type'] !== o.type) throw new ProtocolError(invalid, `the token type must be ${o.type}`);

  if (o.checkExp ?? true) {
    const exp = payload['exp'];
    if (!isInt(exp)) throw new ProtocolError(invalid, 'the token has no valid exp');
    if (o.now >= exp) throw new ProtocolError(expired);
  }
  return { payload, kid, key: resolved };
}
