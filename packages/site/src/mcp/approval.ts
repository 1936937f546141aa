import { DETAILS_SUMMARY_MAX_LENGTH, ProtocolError, detailsDigestOf, isDetailsSummary, isValidAction } from '@mandate/protocol';
import { confirmStepup } from '../local/stepup-confirm.ts';
import { toError } from '../service-client.ts';
import type { McpConfig } from './options.ts';
import { PendingApprovals } from './pending.ts';
import { StepupRefusedError, fileSiteStepup, pollSiteStepup } from './site-stepup.ts';

/** A tool result that is an error the model reads (MCP `isError`). */
export type ToolErrorResult = { content: { type: 'text'; text: string }[]; isError: true };

/** The progress notification sent while the owner is asked (MCP `notifications/progress`). */
export type ProgressNotification = {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; message?: string };
};

/**
 * What the approval needs of the MCP SDK's handler `extra`: `authInfo` (set by mcpAuth), the
 * client's `progressToken`, `sendNotification`, and `signal`. Structurally the SDK's type.
 */
export type ApprovalExtra = {
  authInfo?: { token: string; extra?: Record<string, unknown> } | undefined;
  _meta?: { progressToken?: string | number | undefined } | undefined;
  sendNotification?: (notification: ProgressNotification) => Promise<void>;
  signal?: AbortSignal;
};

export const CALL_AGAIN =
  'The owner is being asked on their phone to approve this call; call this tool again with the same arguments to continue (the approval request stays open for 5 minutes).';

const toolError = (text: string): ToolErrorResult => ({ content: [{ type: 'text', text }], isError: true });

/** Characters an approval card refuses (as `isDetailsSummary` does), shown as \u escapes instead. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu;

/** `name(arg: value, …)` with JSON values, printable, cut to 500 characters. */
export function defaultSummary(name: string, args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v) ?? String(v)}`);
  const text = `${name}(${parts.join(', ')})`.replace(UNPRINTABLE, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
  const chars = Array.from(text);
  return chars.length <= DETAILS_SUMMARY_MAX_LENGTH ? text : `${chars.slice(0, DETAILS_SUMMARY_MAX_LENGTH - 1).join('')}…`;
}

/** The shortest time between two polls of one request. */
const MIN_POLL_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The owner's approval of one tool call (decisions §28), inside the call: the site step-up filed
 * with the caller's pass for action = the tool name and digest = base64url SHA-256 of the JCS of the
 * arguments; long polls for up to `approvalWaitSec` with progress notifications; an approved token
 * used up at Mandate (site = the resource) before the handler runs.
 */
export class Approvals {
  private readonly pending: PendingApprovals;

  constructor(private readonly config: McpConfig) {
    this.pending = new PendingApprovals(config.verifier.now);
  }

  /** Open requests remembered (for tests and status). */
  get open(): number {
    return this.pending.size;
  }

  /** undefined when the owner approved this call (its approval now used up); otherwise the tool error to return. */
  async require(extra: ApprovalExtra, name: string, args: unknown): Promise<ToolErrorResult | undefined> {
    const { verifier } = this.config;
    const auth = extra.authInfo;
    const who = auth?.extra;
    const agentId = who?.['agentId'];
    const userId = who?.['userId'];
    const grantId = who?.['grantId'];
    if (auth === undefined || typeof agentId !== 'string' || typeof userId !== 'string' || typeof grantId !== 'string') {
      return toolError('This tool needs the owner\'s approval, but the call came without a verified Mandate pass.');
    }
    if (!isValidAction(name)) return toolError(`The tool name ${JSON.stringify(name)} cannot be shown to the owner as an action.`);
    const values = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
    let digest: string;
    let summary: string;
    try {
      digest = detailsDigestOf(args ?? {});
      const rule = this.config.tools.get(name);
      summary = rule?.summary !== undefined ? rule.summary(values) : defaultSummary(name, values);
      if (!isDetailsSummary(summary)) throw new TypeError(`tools.${name}.summary gave a text the owner's card cannot show (1 to 500 printable characters)`);
    } catch (e) {
      verifier.onError(toError(e));
      return toolError('This call cannot be put to the owner for approval (its summary could not be made).');
    }

    const key = PendingApprovals.key(grantId, agentId, name, digest);
    const { txn, fresh } = this.pending.open(key, () => fileSiteStepup(verifier, auth.token, name, { summary, digest }));
    let progress = 0;
    const notify = async (message: string) => {
      const token = extra._meta?.progressToken;
      if (token === undefined || extra.sendNotification === undefined) return;
      // A client gone away is the client's business: the wait goes on until the deadline.
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++progress, message } }).catch(() => {});
    };

    try {
      const txnId = await txn;
      await notify(fresh ? 'Asked the owner on their phone; waiting for their approval' : 'Still waiting for the owner\'s approval');
      const deadline = verifier.now() + this.config.approvalWaitSec * 1000;
      for (;;) {
        if (extra.signal?.aborted === true) return toolError(CALL_AGAIN);
        const left = Math.floor((deadline - verifier.now()) / 1000);
        const wait = Math.max(0, Math.min(this.config.approvalPollSec, left));
        const asked = verifier.now();
        const answer = await pollSiteStepup(verifier, auth.token, txnId, wait);
        if (answer.status === 'approved') {
          this.pending.forget(key, txn);
          // Used up at Mandate for exactly this tool and these arguments, by this app for this owner.
          await confirmStepup({ ...verifier, site: this.config.resource }, { stepupToken: answer.stepupToken, action: name, agentId, userId, detailsDigest: digest });
          return undefined;
        }
        if (answer.status !== 'pending') {
          this.pending.forget(key, txn);
          return toolError(
            answer.status === 'denied'
              ? 'The owner denied this call. Do not retry it unless the owner asks you to.'
              : answer.status === 'consumed'
                ? 'The approval of this call was already used; call again to ask the owner anew.'
                : 'The owner did not answer in time; the approval request expired. Call again to ask anew.',
          );
        }
        if (verifier.now() >= deadline || wait === 0) return toolError(CALL_AGAIN);
        await notify('Waiting for the owner\'s approval on their phone');
        // A long poll answers `pending` early only when the service says so; even then this loop must not spin.
        if (verifier.now() - asked < MIN_POLL_MS) await sleep(MIN_POLL_MS);
      }
    } catch (e) {
      if (e instanceof StepupRefusedError) return toolError(`The owner could not be asked: ${e.message}.`);
      if (e instanceof ProtocolError) {
        this.pending.forget(key, txn);
        return toolError(`The approval could not be used (${e.code}); call again to ask the owner anew.`);
      }
      verifier.onError(toError(e));
      return toolError('Mandate cannot be reached right now to ask the owner; try again later.');
    }
  }

  /**
   * Wraps a tool handler so it runs only after the owner approves that call: register the result
   * with `McpServer.registerTool(name, …, mandate.withApproval(name, handler))`.
   */
  wrap<A, E extends ApprovalExtra, R>(name: string, handler: (args: A, extra: E) => R | Promise<R>): (args: A, extra: E) => Promise<R | ToolErrorResult> {
    if (!isValidAction(name)) throw new TypeError(`withApproval: the tool name ${JSON.stringify(name)} is not a valid action (1 to 200 printable characters)`);
    return async (args, extra) => {
      const refused = await this.require(extra, name, args);
      return refused ?? handler(args, extra);
    };
  }
}
