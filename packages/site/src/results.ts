import { ProtocolError, isVerifyErrorCode } from '@mandate/protocol';
import { RevocationStaleError } from './local/revocation-list.ts';
import { ServiceUnavailableError, toError } from './service-client.ts';
import type { MandateErrorCode, Refused } from './types.ts';

export function refuse(status: Refused['status'], error: MandateErrorCode, description: string): Refused {
  return { ok: false, status, error, description };
}

/** A verification failure (site rule 3): 401 with its code. */
export function unauthorized(error: MandateErrorCode, description: string): Refused {
  return refuse(401, error, description);
}

export const insufficientScope = (scope: string): Refused =>
  refuse(403, 'insufficient_scope', `this route needs the scope ${scope}`);

export function stepupRequired(action: string, summary: string | undefined): Refused {
  const refused = { ...refuse(403, 'stepup_required', 'this action needs a step-up approval by the owner, sent in X-Service-Stepup'), action };
  return summary === undefined ? refused : { ...refused, summary };
}

/**
 * The answer a thrown error stands for. A ProtocolError is a verdict about the request (401; 403
 * for `stepup_wrong_details`). Every
 * other error is not: the request is refused with 503 (fail closed), and `onError` hears of it,
 * except for a stale revocation list, whose cause the background polling already reported.
 */
export function refusalFor(e: unknown, onError: (error: Error) => void): Refused {
  // A step-up approved for other details: the agent is who it says, its approval just does not cover
  // this request (like stepup_required, a 403).
  if (e instanceof ProtocolError && e.code === 'stepup_wrong_details') return refuse(403, e.code, e.message);
  if (e instanceof ProtocolError && isVerifyErrorCode(e.code)) return unauthorized(e.code, e.message);
  if (e instanceof RevocationStaleError) return refuse(503, 'revocation_stale', e.message);
  // The details (addresses, store errors) go to the site's log only; the agent learns to retry later.
  onError(toError(e));
  const why = e instanceof ServiceUnavailableError ? 'Mandate cannot be reached' : 'an internal error';
  return refuse(503, 'service_unavailable', `the request cannot be verified right now (${why}); try again later`);
}
