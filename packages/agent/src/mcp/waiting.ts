import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { progressLine } from '../cli/progress.ts';
import { MCP_LIMITS } from './limits.ts';
import type { PendingRegistry, PendingWork } from './pending.ts';
import { pendingResult } from './results.ts';
import type { ToolCallContext } from './tool.ts';

/**
 * Waits up to `waitSeconds` for `work`, sending the host a progress notification at most every 5 s
 * while the owner decides (when the call carries a progressToken). Answers the work's result, or
 * `{status: "pending", txn_id}` when the time is up or the host cancelled: the work goes on.
 */
export async function awaitWork(work: PendingWork, ctx: ToolCallContext, waitSeconds: number, registry: PendingRegistry): Promise<CallToolResult> {
  let sent = 0;
  let lastSentAt = -Infinity;
  const unsubscribe = work.subscribe((p) => {
    if (!ctx.progress || Date.now() - lastSentAt < MCP_LIMITS.progressEveryMs) return;
    lastSentAt = Date.now();
    // A host that went away cannot be told; the wait goes on regardless.
    ctx.progress({ progress: ++sent, message: progressLine(p, work.what) }).catch(() => undefined);
  });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<'stopped'>((resolve) => {
    timer = setTimeout(() => resolve('stopped'), waitSeconds * 1000);
    onAbort = () => resolve('stopped');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const outcome = await Promise.race([work.result, stopped]);
    if (outcome === 'stopped') return pendingResult(work.txnId, work.what);
    registry.delivered(work);
    return outcome;
  } finally {
    unsubscribe();
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}
