/**
 * The category of a plan step's button (decisions §19), by the one category function agent
 * approvals use (modes/category.ts), so a step and the agent approval that later matches it are
 * judged alike. Plans need it for two rules: `money` and `security` steps are never pre-approved,
 * and publish, delete and unknown buttons need texts or a path (plan-input.ts).
 */
import { type ApprovalCategory, categoryOf as categoryOfRequest } from '../modes/category.ts';

export type Category = ApprovalCategory;

/** Category of a button label (case-insensitive, whole words). */
export const categoryOf = (label: string): Category => categoryOfRequest({ action: label, label });
