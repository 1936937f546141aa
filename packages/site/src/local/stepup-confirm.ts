import { ProtocolError, isVerifyErrorCode } from '@mandate/protocol';
import type { VerifierConfig } from '../config.ts';
import { ServiceUnavailableError, callService, isRecord } from '../service-client.ts';

export type StepupToConfirm = {
  stepupToken: string;
  action: string;
  agentId: string;
  userId: string;
  /** The details the step-up must have been approved for; undefined when the route does not bind any. */
  detailsDigest: string | undefined;
};

/**
 * Local mode still uses up every step-up at Mandate (`POST /api/v1/stepup/verify`): single use must
 * hold across all of the site's processes and against cloud verify. We send the agent and person
 * of the pass we verified, so a token of anyone else is refused before it is used up; the answer's
 * agent and person are checked again all the same.
 */
export async function confirmStepup(config: VerifierConfig, s: StepupToConfirm): Promise<void> {
  const res = await callService(config, '/api/v1/stepup/verify', {
    method: 'POST',
    body: {
      stepup_token: s.stepupToken,
      site: config.site,
      action: s.action,
      agent_id: s.agentId,
      user_id: s.userId,
      ...(s.detailsDigest === undefined ? {} : { details_digest: s.detailsDigest }),
    },
  });
  if (res.status !== 200 || !isRecord(res.body)) throw new ServiceUnavailableError(`POST /api/v1/stepup/verify answered ${res.status}`);
  const b = res.body;
  if (b['valid'] === false) {
    const error = b['error'];
    if (!isVerifyErrorCode(error)) throw new ServiceUnavailableError('POST /api/v1/stepup/verify: the answer has an unknown error code');
    const description = b['error_description'];
    throw new ProtocolError(error, typeof description === 'string' ? description : undefined);
  }
  if (b['valid'] !== true) throw new ServiceUnavailableError('POST /api/v1/stepup/verify: the answer does not match the contract');
  if (b['agent_id'] !== s.agentId || b['user_id'] !== s.userId) {
    throw new ProtocolError('stepup_invalid', 'the step-up token was issued to another agent or person');
  }
}
