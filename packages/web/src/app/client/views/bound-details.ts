// The details a step-up or agent approval is bound to (decisions §29): the summary the agent wrote,
// shown exactly as written (text, never markup; its line breaks kept; long words wrap on a phone),
// and the sentence that says the passkey approves exactly these details and nothing else. For one
// call of a connected app's tool (decisions §28) the details are the call's arguments.
import { el } from '../dom.ts';
import type { PendingRequest } from '../types.ts';

const BOUND_DETAILS_TEXT = 'This approval is bound to exactly these details.';
const BOUND_ARGUMENTS_TEXT = 'This approval is bound to exactly these arguments.';

/** The block for the card, or null when the request carries no bound details. */
export function boundDetailsBlock(p: PendingRequest, what: 'details' | 'arguments' = 'details'): HTMLElement | null {
  const summary = p.details?.summary;
  if (typeof summary !== 'string' || summary === '') return null;
  return el('figure', { className: 'binding bound-details' },
    el('figcaption', { className: 'binding-label', text: what === 'arguments' ? 'Arguments' : 'Details' }),
    el('blockquote', { className: 'details-summary', text: summary }),
    el('p', { className: 'hint', text: what === 'arguments' ? BOUND_ARGUMENTS_TEXT : BOUND_DETAILS_TEXT }));
}
