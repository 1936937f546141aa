import { LIMITS } from '@mandate/protocol';
import type { GrantRecord } from '../../store/ports/index.ts';
import { type AppError, forbidden, unauthorized } from '../errors.ts';

const ASK_AGAIN = 'ask the owner for access again: POST /api/v1/authz-requests';

export const NO_ACCESS = 'no approved access for this site';
export const REFRESH_INVALID = 'refresh token already used or invalid';

/**
 * Throws why a grant cannot issue a pass now. `withoutRefresh`: the caller sent no refresh token,
 * which is allowed only within one hour of the approval (decisions §8).
 *
 * The one-hour rule answers 401 (not 403): the access itself still stands, what is missing is the
 * credential that proves this caller holds the current refresh token.
 */
export function assertGrantUsable(grant: GrantRecord | undefined, now: number, withoutRefresh: boolean): asserts grant is GrantRecord {
  if (!grant || grant.status !== 'active') throw forbidden(NO_ACCESS, { next_step: ASK_AGAIN });
  if (grant.expiresAt !== null && grant.expiresAt <= now) {
    throw forbidden('the approved access for this site has expired', { next_step: ASK_AGAIN });
  }
  if (grant.usesLeft !== null && grant.usesLeft <= 0) {
    throw forbidden('the approved access for this site has no uses left', { next_step: ASK_AGAIN });
  }
  if (withoutRefresh && now - grant.createdAt > LIMITS.tokenWithoutRefreshSec * 1000) {
    throw unauthorized('a pass without refresh_token is issued only within one hour of the approval', {
      next_step: `send the refresh_token from your last token response; if you no longer have it, ${ASK_AGAIN}`,
    });
  }
}

export const refreshInvalid = (): AppError =>
  unauthorized(REFRESH_INVALID, { next_step: `use the refresh_token of your latest token response; if you no longer have it, ${ASK_AGAIN}` });
