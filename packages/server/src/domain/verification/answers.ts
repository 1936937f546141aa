import { ProtocolError, type VerifyErrorCode } from '@mandate/protocol';

/** The failure answer of both verify endpoints (decisions §7): always HTTP 200. */
export interface VerifyFailure {
  valid: false;
  error: VerifyErrorCode;
  error_description: string;
}

export const failure = (error: VerifyErrorCode, description: string): VerifyFailure => ({ valid: false, error, error_description: description });

/**
 * Turns a ProtocolError into its failure answer; anything else (database down, a bug) is not a
 * verdict about the token and propagates, so the site sees a 5xx and refuses, never a false "valid".
 */
export function asFailure(e: unknown): VerifyFailure {
  if (e instanceof ProtocolError) return failure(e.code, e.message);
  throw e;
}
