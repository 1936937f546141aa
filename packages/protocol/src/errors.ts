/**
 * Stable verification error codes (decisions.md §7). Sites and SDKs match on these strings,
 * so the list is closed: adding a code is a protocol change.
 */
export const VERIFY_ERROR_CODES = [
  'invalid_request',
  'invalid_token',
  'token_expired',
  'wrong_site',
  'invalid_dpop',
  'dpop_method_mismatch',
  'dpop_url_mismatch',
  'dpop_key_mismatch',
  'dpop_stale',
  'dpop_replay',
  'agent_revoked',
  'grant_revoked',
  'stepup_invalid',
  'stepup_used_or_expired',
  'stepup_wrong_action',
  'stepup_wrong_site',
  'stepup_wrong_details',
] as const;

export type VerifyErrorCode = (typeof VERIFY_ERROR_CODES)[number];

const DEFAULT_DESCRIPTIONS: Record<VerifyErrorCode, string> = {
  invalid_request: 'the request is malformed',
  invalid_token: 'the access token is invalid',
  token_expired: 'the access token has expired',
  wrong_site: 'the access token was issued for another site',
  invalid_dpop: 'the DPoP proof is invalid',
  dpop_method_mismatch: 'the DPoP proof was made for another HTTP method',
  dpop_url_mismatch: 'the DPoP proof was made for another URL',
  dpop_key_mismatch: 'the DPoP proof is not signed by the key the token is bound to',
  dpop_stale: 'the DPoP proof is too old or too far in the future',
  dpop_replay: 'the DPoP proof jti was already used',
  agent_revoked: 'the agent was revoked by its owner',
  grant_revoked: 'the access for this site was revoked',
  stepup_invalid: 'the step-up token is invalid',
  stepup_used_or_expired: 'the step-up token was already used or has expired',
  stepup_wrong_action: 'the step-up token was approved for another action',
  stepup_wrong_site: 'the step-up token was issued for another site',
  stepup_wrong_details: 'the step-up token was approved for other details',
};

export function isVerifyErrorCode(value: unknown): value is VerifyErrorCode {
  return typeof value === 'string' && (VERIFY_ERROR_CODES as readonly string[]).includes(value);
}

/**
 * The only error a verification function throws for bad input. `code` goes to the `error`
 * field of a verify answer, `message` to `error_description`; neither ever echoes token bytes.
 */
export class ProtocolError extends Error {
  readonly code: VerifyErrorCode;

  constructor(code: VerifyErrorCode, description?: string) {
    super(description ?? DEFAULT_DESCRIPTIONS[code]);
    this.name = 'ProtocolError';
    this.code = code;
  }
}
