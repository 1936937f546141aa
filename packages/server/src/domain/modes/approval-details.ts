import { badRequest } from '../errors.ts';
import { requireReadable } from '../readable-text.ts';
import { siteProblem } from '../approvals/request-rules.ts';
import type { AgentApprovalDetails } from '../../store/ports/index.ts';

/**
 * The `details` of an agent approval (decisions §19): what the owner's card shows and what the
 * category and approval modes read. Every field is optional; texts are trimmed of surrounding
 * spaces and cut to their size (the agent copies them from a page, so an overlong label is not the
 * agent's fault), host names and the path must be valid, digests are checked exactly.
 */
export type { AgentApprovalDetails };

export const ACTION_PATTERN = /^[a-z0-9_:-]{1,64}$/;
export const DETAIL_TEXT_MAX = { label: 80, amount: 40, item: 120, page: 200 } as const;
export const PATH_MAX = 300;
export const TEXT_DIGESTS_MAX = 8;
const DIGEST = /^[0-9a-f]{64}$/;
const PATH = /^\/[\x21-\x7e]*$/;

/** The raw body field, as the route's schema lets it through. */
export type AgentApprovalDetailsIn = Partial<Record<keyof typeof DETAIL_TEXT_MAX | 'host' | 'target_host' | 'path', string>> & {
  card_fields?: boolean;
  password_fields?: boolean;
  text_digests?: string[];
};

/** `[a-z0-9_:-]{1,64}` or 400. */
export function checkApprovalAction(action: string): string {
  if (!ACTION_PATTERN.test(action)) throw badRequest('invalid action: 1 to 64 characters of lower-case letters, digits and _ : - (for example checkout:submit)');
  return action;
}

/** Cuts at a code point boundary, so an emoji is never split in half. */
function cut(text: string, max: number): string {
  const points = [...text.trim()];
  return points.length <= max ? points.join('') : points.slice(0, max).join('').trimEnd();
}

/** The normalized details, or 400 naming the field at fault. */
export function normalizeDetails(d: AgentApprovalDetailsIn | undefined): AgentApprovalDetails {
  const out: AgentApprovalDetails = {};
  if (d === undefined) return out;
  for (const field of ['label', 'amount', 'item', 'page'] as const) {
    const v = d[field];
    if (v === undefined) continue;
    const t = cut(v.replace(/[\r\n\t]+/g, ' '), DETAIL_TEXT_MAX[field]);
    if (/\p{Cc}/u.test(t)) throw badRequest(`invalid details.${field}: no control characters`);
    if (t !== '') out[field] = requireReadable(`details.${field}`, t);
  }
  for (const field of ['host', 'target_host'] as const) {
    const v = d[field]?.trim();
    if (v === undefined || v === '') continue;
    if (siteProblem(v) !== null) throw badRequest(`invalid details.${field}: a host name (for example shop.example.com), at most 253 characters`);
    out[field] = v.toLowerCase();
  }
  if (d.path !== undefined && d.path.trim() !== '') {
    const p = d.path.trim();
    if (p.length > PATH_MAX || !PATH.test(p)) throw badRequest(`invalid details.path: "/" followed by printable ASCII (no spaces), at most ${PATH_MAX} characters`);
    out.path = p;
  }
  if (d.card_fields !== undefined) out.card_fields = d.card_fields;
  if (d.password_fields !== undefined) out.password_fields = d.password_fields;
  if (d.text_digests !== undefined) {
    if (d.text_digests.length > TEXT_DIGESTS_MAX) throw badRequest(`invalid details.text_digests: at most ${TEXT_DIGESTS_MAX}`);
    const bad = d.text_digests.find((x) => !DIGEST.test(x));
    if (bad !== undefined) throw badRequest('invalid details.text_digests: each a SHA-256 digest in 64 lower-case hex digits');
    out.text_digests = [...new Set(d.text_digests)];
  }
  return out;
}
