import type { VerifierConfig } from '../config.ts';
import { ServiceUnavailableError, callService, isRecord } from '../service-client.ts';

/** Why Mandate would not file a site step-up: the words for the tool error. */
export class StepupRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StepupRefusedError';
  }
}

const TXN_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * `POST /api/v1/stepup/site` (decisions §28): a card to the pass's owner for `action` with these
 * details. Authenticated by the pass itself.
 */
export async function fileSiteStepup(config: VerifierConfig, pass: string, action: string, details: { summary: string; digest: string }): Promise<string> {
  const res = await callService(config, '/api/v1/stepup/site', { method: 'POST', body: { access_token: pass, action, details } });
  const body = isRecord(res.body) ? res.body : {};
  if (res.status === 429) {
    const after = res.headers.get('retry-after');
    throw new StepupRefusedError(`too many approval requests for this app right now${after === null ? '' : `; try again in ${after} s`}`);
  }
  if (res.status === 401 || res.status === 403) {
    const why = typeof body['error_description'] === 'string' ? body['error_description'] : typeof body['detail'] === 'string' ? body['detail'] : 'the pass was refused';
    throw new StepupRefusedError(`Mandate would not ask the owner: ${why}`);
  }
  const txn = body['txn_id'];
  if (res.status !== 200 || typeof txn !== 'string' || !TXN_PATTERN.test(txn)) throw new ServiceUnavailableError(`POST /api/v1/stepup/site answered ${res.status}`);
  return txn;
}

export type StepupPoll = { status: 'pending' | 'denied' | 'expired' | 'consumed' | 'unknown' } | { status: 'approved'; stepupToken: string };

/** `GET /api/v1/stepup/site/{txn}?wait=…` with the pass: the owner's answer, waiting up to `waitSec` for it. */
export async function pollSiteStepup(config: VerifierConfig, pass: string, txn: string, waitSec: number): Promise<StepupPoll> {
  // The long poll holds the answer back for up to waitSec: the timeout counts from after it.
  const res = await callService({ ...config, timeoutMs: config.timeoutMs + waitSec * 1000 }, `/api/v1/stepup/site/${txn}?wait=${waitSec}`, {
    method: 'GET',
    headers: { authorization: `Bearer ${pass}` },
  });
  if (res.status === 404) return { status: 'unknown' };
  const body = isRecord(res.body) ? res.body : {};
  if (res.status !== 200) throw new ServiceUnavailableError(`GET /api/v1/stepup/site/{txn} answered ${res.status}`);
  const status = body['status'];
  const token = body['stepup_token'];
  if (status === 'approved') {
    // Approved but the token went to another poll: the same as consumed for this one.
    return typeof token === 'string' ? { status: 'approved', stepupToken: token } : { status: 'consumed' };
  }
  if (status === 'pending' || status === 'denied' || status === 'expired' || status === 'consumed') return { status };
  throw new ServiceUnavailableError('GET /api/v1/stepup/site/{txn}: the answer does not match the contract');
}
