import { type ApprovalDetails, detailsProblem } from '@mandate/protocol';
import { badRequest } from '../errors.ts';

/**
 * The `details` `{summary, digest}` a step-up or agent approval is bound to (decisions §29), or
 * null when none were sent. 400 naming the field at fault for any other shape: a summary that is
 * empty, over 500 characters or hides text, a digest that is not 43 base64url characters, a field
 * that is not one of the two.
 */
export function boundDetailsOf(value: unknown): ApprovalDetails | null {
  if (value === undefined) return null;
  const problem = detailsProblem(value);
  if (problem !== null) throw badRequest(problem);
  const { summary, digest } = value as ApprovalDetails;
  return { summary, digest };
}

/**
 * An agent approval's `details` hold what the agent read on the page (label, amount, ...) and,
 * optionally, `summary` and `digest` together: the details the approval is bound to.
 */
export function boundDetailsWithin(details: { summary?: unknown; digest?: unknown } | undefined): ApprovalDetails | null {
  if (details === undefined || (details.summary === undefined && details.digest === undefined)) return null;
  return boundDetailsOf({ summary: details.summary, digest: details.digest });
}

/** What Activity keeps of bound details: what the owner read and its digest. */
export function boundDetailsActivity(details: ApprovalDetails | null | undefined): { details_summary?: string; details_digest?: string } {
  return details ? { details_summary: details.summary, details_digest: details.digest } : {};
}
