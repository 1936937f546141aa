/**
 * The category of a plan step's button (decisions §19). The approvals work owns the one category
 * function for agent approvals; until it is merged, this minimal stand-in with the same word lists
 * keeps plans working, and the lead swaps this file's body for a re-export of that function.
 * Plans need it for two rules: `money` and `security` steps are never pre-approved, and publish,
 * delete and unknown buttons need texts or a path (plan-input.ts).
 */
export type Category = 'money' | 'security' | 'delete' | 'publish' | 'low' | 'unknown';

const MONEY = ['pay', 'buy', 'order', 'checkout', 'check out', 'subscribe', 'book', 'renew', 'purchase', 'donate'];
const SECURITY = ['password', 'email', 'e-mail', '2fa', 'token', 'authorize', 'authorise', 'access', 'approve', 'billing', 'address'];
const DELETE = ['delete', 'remove', 'erase', 'destroy', 'cancel', 'close account', 'unsubscribe'];
const PUBLISH = ['post', 'send', 'submit', 'comment', 'share', 'deploy', 'publish', 'reply', 'tweet', 'upload', 'merge'];
const LOW_WHOLE = ['save', 'update', 'apply', 'filter', 'sort', 'archive', 'next', 'next page', 'previous', 'previous page', 'add to cart', 'search', 'refresh', 'load more', 'show more'];

function words(label: string): string {
  return ` ${label.toLowerCase().replace(/[^\p{L}\p{N}-]+/gu, ' ').trim()} `;
}

const hasWord = (w: string, list: readonly string[]): boolean => list.some((x) => w.includes(` ${x} `));

/** Category of a button label (case-insensitive, whole words). */
export function categoryOf(label: string, facts: { amount?: boolean; cardFields?: boolean; passwordFields?: boolean } = {}): Category {
  const w = words(label);
  if (facts.cardFields || facts.amount || hasWord(w, MONEY)) return 'money';
  if (facts.passwordFields || hasWord(w, SECURITY)) return 'security';
  if (hasWord(w, DELETE)) return 'delete';
  if (hasWord(w, PUBLISH)) return 'publish';
  if (LOW_WHOLE.includes(w.trim())) return 'low';
  return 'unknown';
}
