import type { MandateAgent } from '../agent.ts';
import type { WaitOptions } from '../approvals/wait.ts';
import { ApprovalError } from '../client/errors.ts';
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
      ctx.out.note(`Stopped waiting. The request ${txnId} stays open until it expires; resume with: ${resumeCommand(ctx, txnId)}`);
      throw new Interrupted();
    }
    throw withResumeCommand(ctx, e);
  } finally {
    progress.done();
  }
}

/** The command that waits for `txnId` again, as this CLI runs here (invocation.ts rewrites `mandate-agent`). */
function resumeCommand(ctx: CliContext, txnId: string): string {
  return `mandate-agent wait ${txnId}${ctx.dirFlag}`;
}

/**
 * A wait that stopped at --timeout while the request is still open ends with the command to copy
 * that waits for it again; any other error is returned as it is.
 */
export function withResumeCommand(ctx: CliContext, e: unknown): unknown {
  if (!(e instanceof ApprovalError) || e.outcome !== 'timeout' || !e.stillOpen) return e;
  return new ApprovalError(e.txnId, 'timeout', `stopped waiting for the owner (--timeout); the request ${e.txnId} is still open until it expires. Wait for it again with: ${resumeCommand(ctx, e.txnId)}`, true);
}
