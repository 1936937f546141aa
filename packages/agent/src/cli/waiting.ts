import type { MandateAgent } from '../agent.ts';
import type { WaitOptions } from '../approvals/wait.ts';
import type { PollAnswer } from '../client/types.ts';
import type { CliContext } from './command.ts';
import { Interrupted } from './exit-codes.ts';
import { ProgressReporter } from './progress.ts';

/** Shared flags of the commands that wait for the owner. */
export const WAIT_OPTIONS = {
  timeout: { type: 'string' },
  interval: { type: 'string' },
} as const;

export const WAIT_HELP = `  --timeout SEC    stop waiting after SEC seconds (the request stays open; resume with: wait TXN)
  --interval SEC   seconds between polls (default 2)`;

/**
 * Waits for the owner with a progress line on stderr. Ctrl-C stops the wait (not the request) and
 * says how to resume it.
 */
export async function waitWithProgress(ctx: CliContext, agent: MandateAgent, txnId: string, what: string, opts: Omit<WaitOptions, 'onProgress' | 'signal'>): Promise<PollAnswer> {
  const progress = new ProgressReporter(ctx.out.stderr, what);
  try {
    return await agent.waitForApproval(txnId, { ...opts, onProgress: progress.report, signal: ctx.signal });
  } catch (e) {
    if (ctx.signal.aborted) {
      progress.done();
      ctx.out.note(`Stopped waiting. The request ${txnId} stays open until it expires; resume with: mandate-agent wait ${txnId}`);
      throw new Interrupted();
    }
    throw e;
  } finally {
    progress.done();
  }
}
