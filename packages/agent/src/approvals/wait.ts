import { ApprovalError, MandateError } from '../client/errors.ts';
import type { ServiceClient } from '../client/http.ts';
import type { PollAnswer, RequestStatus } from '../client/types.ts';
import type { Clock } from '../clock.ts';
import { LIMITS } from '@mandate/protocol';

export type WaitProgress = {
  txnId: string;
  /** The status read by the last poll; `unreachable` while the service does not answer. */
  status: RequestStatus | 'unreachable';
  /** True when the status differs from the previous poll's (always true for the first). */
  changed: boolean;
  /** Until the request expires, by the SDK's clock (never below 0). */
  remainingMs: number;
  answer?: PollAnswer;
};

export type WaitOptions = {
  onProgress?: (progress: WaitProgress) => void;
  signal?: AbortSignal;
  /** Between polls (default 2000 ms; at least 200 ms). */
  intervalMs?: number;
  /** When the request expires (epoch ms); default 300 s from now, the lifetime of every request. */
  expiresAt?: number;
  /** Stop waiting sooner (ms from now); the request stays open and can be waited for again. */
  timeoutMs?: number;
};

type Deps = { client: ServiceClient; clock: Clock; agentJwt: () => Promise<string> };

/** After its expiry the service reads a request `expired`; this slack covers clock differences. */
const EXPIRY_GRACE_MS = 30_000;

/**
 * Polls `GET /api/v1/authz-requests/{txn_id}` until the owner answers. Resolves with the answer
 * when approved (for a step-up, the one answer that carries `stepup_token`: every poll sends
 * `X-Agent-JWT`, so the token is collected as soon as it is there). Rejects with `ApprovalError`
 * when denied, expired, already collected, or out of time. A service that stops answering is
 * reported through `onProgress` and polled again until the request would have expired.
 */
export async function waitForAnswer(d: Deps, txnId: string, opts: WaitOptions = {}): Promise<PollAnswer> {
  const interval = Math.max(200, opts.intervalMs ?? 2000);
  const expiresAt = opts.expiresAt ?? d.clock.now() + LIMITS.requestLifetimeSec * 1000;
  const giveUpAt = Math.min(expiresAt + EXPIRY_GRACE_MS, opts.timeoutMs === undefined ? Infinity : d.clock.now() + opts.timeoutMs);
  const path = `/api/v1/authz-requests/${encodeURIComponent(txnId)}`;
  let previous: WaitProgress['status'] | undefined;
  let lastUnreachable: MandateError | undefined;

  for (;;) {
    let answer: PollAnswer | undefined;
    try {
      answer = await d.client.call<PollAnswer>('GET', path, { headers: { 'x-agent-jwt': await d.agentJwt() }, signal: opts.signal });
      lastUnreachable = undefined;
    } catch (e) {
      if (!(e instanceof MandateError && (e.code === 'unreachable' || e.status >= 500))) throw e;
      lastUnreachable = e;
    }
    const status = answer?.status ?? 'unreachable';
    opts.onProgress?.({ txnId, status, changed: status !== previous, remainingMs: Math.max(0, expiresAt - d.clock.now()), ...(answer ? { answer } : {}) });
    previous = status;

    if (answer && answer.status !== 'pending') return settle(txnId, answer);
    if (d.clock.now() + interval > giveUpAt) {
      if (lastUnreachable) throw lastUnreachable;
      const stillOpen = giveUpAt < expiresAt + EXPIRY_GRACE_MS;
      throw new ApprovalError(txnId, 'timeout', stillOpen
        ? `stopped waiting for the owner; the request is still open until it expires: wait for it again with its id ${txnId}`
        : 'the owner did not answer in time', stillOpen);
    }
    await d.clock.sleep(interval, opts.signal);
  }
}

function settle(txnId: string, answer: PollAnswer): PollAnswer {
  switch (answer.status) {
    case 'approved':
      if (answer.kind === 'stepup' && !answer.stepup_token) {
        throw new ApprovalError(txnId, 'undelivered', `the step-up was approved but its token was not delivered: ${answer.stepup_token_error ?? 'no reason given'}`);
      }
      return answer;
    case 'denied':
      throw new ApprovalError(txnId, 'denied', 'the owner denied the request (or removed or blocked the agent meanwhile)');
    case 'expired':
      throw new ApprovalError(txnId, 'expired', 'nobody answered the request in time; ask again later');
    case 'consumed':
      throw new ApprovalError(txnId, 'consumed', `the step-up token was already collected: ${answer.stepup_token_error ?? 'by an earlier poll'}`);
    default:
      throw new MandateError('service_error', { detail: `unexpected request status ${JSON.stringify(answer.status)}` });
  }
}
