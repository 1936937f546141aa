/**
 * The category of an agent approval (decisions §19): one pure function, no I/O.
 *
 * The text read is `details.label` when the agent sent one, else the `action`. Signals from the
 * form itself (card fields, password fields, an amount) outrank the words.
 *
 * Order, highest first: money > security > delete > publish > unknown > low. Approval modes use it
 * ("allow" never approves money or security, "smart" only low), so the order is chosen so that more
 * text can only make a request *more* careful, never less:
 * - money and security words are found anywhere in the label, so adding one lifts the category;
 * - `low` matches the whole label only ("Save", "Next page"), so any added word drops it out of `low`,
 *   which is why `low` sits below `unknown`: "Save" is low, "Save and pay" is money, "Save xyz" unknown.
 * Words are matched as whole words after Unicode NFKC folding and lower-casing, so "ＰＡＹ" is "pay",
 * "Pay-later" is "pay later", and "Payday" or "Bookmark" are not money words.
 */

export type ApprovalCategory = 'money' | 'security' | 'delete' | 'publish' | 'unknown' | 'low';

/** Highest first; `categoryRank` answers a larger number for a more careful category. */
export const CATEGORY_ORDER: readonly ApprovalCategory[] = ['money', 'security', 'delete', 'publish', 'unknown', 'low'];

export function categoryRank(category: ApprovalCategory): number {
  return CATEGORY_ORDER.length - CATEGORY_ORDER.indexOf(category);
}

export interface CategoryInput {
  action: string;
  label?: string | undefined;
  amount?: string | undefined;
  card_fields?: boolean | undefined;
  password_fields?: boolean | undefined;
}

/** A word and its usual inflections, all as whole words. */
function forms(...stems: string[]): string[] {
  const out: string[] = [];
  for (const s of stems) out.push(s, `${s}s`, `${s}es`, `${s}ed`, `${s}d`, `${s}ing`);
  return out;
}

const MONEY_WORDS = new Set([
  ...forms('pay', 'payment', 'buy', 'purchase', 'order', 'checkout', 'subscribe', 'subscription', 'book', 'renew', 'renewal'),
  'paid', 'bought', 'booking', 'bookings', 'donate', 'donation', 'tip', 'transfer', 'withdraw', 'deposit', 'invoice',
  'charge', 'refund', 'upgrade', 'rent', 'reserve', 'reservation', 'bid', 'tipping', 'paypal', 'wire',
]);
const MONEY_PHRASES = [['check', 'out'], ['place', 'order']];

const SECURITY_WORDS = new Set([
  ...forms('password', 'passcode', 'passphrase', 'passkey', 'email', 'token', 'authorize', 'authorise', 'access', 'approve', 'address', 'credential', 'permission', 'verify', 'recover'),
  'passwords', 'pin', '2fa', 'mfa', 'otp', 'totp', 'billing', 'login', 'logins', 'signin', 'oauth', 'api', 'key', 'keys', 'secret', 'secrets',
  'security', 'recovery', 'phone', 'authentication', 'authenticator', 'admin', 'role', 'roles', 'grant', 'consent',
]);
const SECURITY_PHRASES = [['e', 'mail'], ['sign', 'in'], ['log', 'in'], ['two', 'factor'], ['2', 'factor']];

const DELETE_WORDS = new Set([
  ...forms('delete', 'remove', 'erase', 'destroy', 'purge', 'wipe', 'trash', 'discard', 'uninstall', 'deactivate', 'terminate', 'revoke', 'unpublish'),
  'deletion', 'removal',
]);
const DELETE_PHRASES = [['close', 'account']];

const PUBLISH_WORDS = new Set([
  ...forms('post', 'send', 'submit', 'comment', 'share', 'deploy', 'publish', 'tweet', 'reply', 'replie', 'upload', 'invite', 'merge', 'release', 'broadcast', 'announce', 'message', 'review', 'rate'),
  'sent', 'submission', 'retweet', 'repost',
]);
const PUBLISH_PHRASES = [['go', 'live']];

/** Whole labels (after folding) that change little and are easily undone. */
const LOW_LABELS = new Set([
  'save', 'save draft', 'save changes', 'update', 'apply', 'apply filter', 'apply filters', 'filter', 'sort', 'sort by',
  'archive', 'next', 'next page', 'previous', 'previous page', 'prev', 'back', 'add to cart', 'add to basket',
  'add to wishlist', 'search', 'refresh', 'reload', 'load more', 'show more', 'show less', 'see more', 'more',
  'expand', 'collapse', 'continue', 'close', 'dismiss', 'ok', 'done', 'cancel', 'view', 'preview', 'open', 'edit',
  'select', 'select all', 'mark as read', 'mark all as read', 'like', 'star', 'unstar', 'follow', 'bookmark',
  'zoom in', 'zoom out', 'print', 'download', 'copy', 'undo', 'redo', 'first page', 'last page', 'go', 'find',
]);

/** NFKC, lower case, words of letters and digits. */
export function labelWords(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function hasPhrase(words: string[], phrases: string[][]): boolean {
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= words.length; i++) {
      if (phrase.every((w, j) => words[i + j] === w)) return true;
    }
  }
  return false;
}

function hasAny(words: string[], set: Set<string>, phrases: string[][]): boolean {
  return words.some((w) => set.has(w)) || hasPhrase(words, phrases);
}

/** The category of a request (§19). Pure: same input, same answer. */
export function categoryOf(input: CategoryInput): ApprovalCategory {
  const text = input.label !== undefined && input.label.trim() !== '' ? input.label : input.action;
  const words = labelWords(text);
  const amount = input.amount?.trim() ?? '';
  if (input.card_fields === true || amount !== '' || /\p{Sc}/u.test(text) || hasAny(words, MONEY_WORDS, MONEY_PHRASES)) return 'money';
  if (input.password_fields === true || hasAny(words, SECURITY_WORDS, SECURITY_PHRASES)) return 'security';
  if (hasAny(words, DELETE_WORDS, DELETE_PHRASES)) return 'delete';
  if (hasAny(words, PUBLISH_WORDS, PUBLISH_PHRASES)) return 'publish';
  if (LOW_LABELS.has(words.join(' '))) return 'low';
  return 'unknown';
}
