import { decodeJwt } from 'jose';
import { ProtocolError, isVerifyErrorCode } from '@mandate/protocol';
import type { VerifierConfig } from './config.ts';
import type { PreparedRequest, Strategy } from './strategy.ts';
import { ServiceUnavailableError, callService, isRecord, isStringArray, isStringRecord } from './service-client.ts';
import type { Verified } from './types.ts';

/** The pass's scopes as written, unverified: only used to decide NOT to send a step-up token. */
function claimedScopes(accessToken: string): string[] {
  try {
    const scope = decodeJwt(accessToken)['scope'];
    return isStringArray(scope) ? scope : [];
  } catch {
    return [];
  }
}

/** Reads a `POST /api/v1/verify` answer; anything off-contract is no verdict. */
function readAnswer(body: unknown, site: string): Verified {
  if (!isRecord(body)) throw new ServiceUnavailableError('POST /api/v1/verify: the answer is not a JSON object');
  if (body['valid'] === false) {
    const error = body['error'];
    if (!isVerifyErrorCode(error)) throw new ServiceUnavailableError('POST /api/v1/verify: the answer has an unknown error code');
    const description = body['error_description'];
    throw new ProtocolError(error, typeof description === 'string' ? description : undefined);
  }
  const { valid, agent_id, agent_name, user_id, site: answeredSite, scopes, user_info, stepup } = body;
  if (
    valid !== true ||
    typeof agent_id !== 'string' ||
    typeof agent_name !== 'string' ||
    typeof user_id !== 'string' ||
    answeredSite !== site ||
    !isStringArray(scopes) ||
    !isStringRecord(user_info) ||
    typeof stepup !== 'boolean'
  ) {
    throw new ServiceUnavailableError('POST /api/v1/verify: the answer does not match the contract');
  }
  return { ok: true, agentId: agent_id, agentName: agent_name, userId: user_id, site, scopes, userInfo: user_info, stepup };
}

/**
 * Cloud mode: one `POST /api/v1/verify` per request, with our site id (so the pass must be for us)
 * and the rebuilt URL. The step-up token goes along only on routes that declare an action, because
 * Mandate uses it up when it accepts it; and not when the pass plainly lacks the route's scope,
 * because that request is refused anyway (403 insufficient_scope) and must not cost the owner's
 * approval. Local mode behaves the same way.
 */
export class CloudStrategy implements Strategy {
  constructor(private readonly config: VerifierConfig) {}

  async verify(p: PreparedRequest): Promise<Verified> {
    const sendStepup =
      p.action !== undefined && p.stepupToken !== undefined && (p.scope === undefined || claimedScopes(p.accessToken).includes(p.scope));
    const res = await callService(this.config, '/api/v1/verify', {
      method: 'POST',
      body: {
        access_token: p.accessToken,
        dpop: p.dpop,
        method: p.method,
        url: p.url,
        site: this.config.site,
        ...(sendStepup ? { stepup_token: p.stepupToken, action: p.action, ...(p.detailsDigest === undefined ? {} : { details_digest: p.detailsDigest }) } : {}),
      },
    });
    if (res.status !== 200) throw new ServiceUnavailableError(`POST /api/v1/verify answered ${res.status}`);
    return readAnswer(res.body, this.config.site);
  }

  async start(): Promise<void> {}

  async refresh(): Promise<void> {}

  close(): void {}
}
