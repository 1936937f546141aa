import { AppError } from '../errors.ts';

/**
 * An RFC 6749 error of the token or userinfo endpoint: the OIDC routes answer it as
 * `{error, error_description}` (not `{detail}`), with `Cache-Control: no-store`.
 */
export class OAuthError extends AppError {
  constructor(readonly error: string, description: string, status = 400, headers: Record<string, string> = {}) {
    super(status, description, {}, headers);
  }
}

export const invalidRequest = (why: string) => new OAuthError('invalid_request', why);
export const invalidGrant = (why: string) => new OAuthError('invalid_grant', why);
export const invalidClient = (why: string) => new OAuthError('invalid_client', why, 401, { 'www-authenticate': 'Basic realm="oidc", charset="UTF-8"' });
/** RFC 8707 §2: the `resource` of a token request is not the one the code or sign-in is for. */
export const invalidTarget = (why: string) => new OAuthError('invalid_target', why);
export const unsupportedGrantType = (why: string) => new OAuthError('unsupported_grant_type', why);
export const invalidToken = (why: string) => new OAuthError('invalid_token', why, 401, { 'www-authenticate': `Bearer error="invalid_token", error_description="${why.replace(/["\\]/g, '')}"` });
