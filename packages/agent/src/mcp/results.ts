import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalError, MandateError } from '../client/errors.ts';
import { MCP_LIMITS } from './limits.ts';
import { ToolArgumentError } from './site-tool.ts';
import { capText } from './text-cap.ts';

/**
 * The shapes every tool answers with: `structuredContent` for programs, a short text for the model
 * (capped at 64 kB). Nothing secret is ever put in: callers hand over only what the model may read.
 */
export function toolResult(structured: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: 'text', text: capText(text, MCP_LIMITS.resultTextBytes).text }], structuredContent: structured };
}

/** Work that waits for the owner goes on in this process; `mandate_wait` picks it up. */
export function pendingResult(txnId: string, what: string): CallToolResult {
  return toolResult(
    { status: 'pending', txn_id: txnId },
    `Still waiting for the owner to answer ${what} (request ${txnId}). The request stays open; call mandate_wait with {"txn_id": "${txnId}"} later to get the outcome.`,
  );
}

export type ToolErrorBody = {
  error: string;
  detail: string;
  next_step?: string;
  field?: string;
  txn_id?: string;
  site?: string;
  /** A refusal for want of a scope: what the agent's grant on `site` holds, and what the call needs (when known). */
  scopes_granted?: string[];
  scopes_needed?: string[];
};

/**
 * A failure as a tool result with `isError: true`: the service's own `detail` and `next_step` (a
 * `MandateError` carries them), or the field of the arguments at fault. Never a protocol error, so
 * the model reads it and can act on it.
 */
export function toolError(e: unknown): CallToolResult {
  const body = errorBody(e);
  const text = [`Error (${body.error}): ${body.detail}`, ...(body.next_step ? [`Next step: ${body.next_step}`] : [])].join('\n');
  return { ...toolResult({ ...body }, text), isError: true };
}

function errorBody(e: unknown): ToolErrorBody {
  if (e instanceof ToolArgumentError) return { error: 'invalid_argument', field: e.field, detail: e.message };
  if (e instanceof ApprovalError) {
    return { error: e.code, detail: e.detail, next_step: e.nextStep ?? NEXT_AFTER[e.outcome], txn_id: e.txnId };
  }
  if (e instanceof MandateError) {
    const site = (e as { site?: unknown }).site;
    return {
      error: e.code,
      detail: e.detail,
      ...(e.nextStep ? { next_step: e.nextStep } : {}),
      ...(typeof site === 'string' ? { site } : {}),
    };
  }
  if (e instanceof ToolFailure) return { error: e.code, detail: e.message, ...(e.nextStep ? { next_step: e.nextStep } : {}), ...e.fields };
  // Anything else is our fault: say so without echoing internals (an unexpected message could hold anything).
  return { error: 'internal_error', detail: 'the MCP server failed unexpectedly; its log (stderr) says more' };
}

const NEXT_AFTER: Record<ApprovalError['outcome'], string> = {
  denied: 'do not retry the same request at once; tell the user the owner said no, or ask the owner with mandate_notify_owner why',
  expired: 'nobody answered in time; ask again later, or tell the owner with mandate_notify_owner',
  consumed: 'ask for the approval again',
  undelivered: 'ask for the approval again',
  timeout: 'call mandate_wait with the txn_id later',
};

/** A failure of ours with a stable code and words meant for the model (a site that hangs, a body too big). */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly nextStep?: string,
    /** More of the body, for programs (the site and scopes of a missing-scope refusal). */
    readonly fields: Pick<ToolErrorBody, 'site' | 'txn_id' | 'scopes_granted' | 'scopes_needed'> = {},
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}
