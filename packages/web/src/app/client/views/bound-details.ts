// The details a step-up or agent approval is bound to (decisions §29): the summary the agent wrote,
// shown exactly as written (text, never markup; its line breaks kept; long words wrap on a phone),
// and the sentence that says the passkey approves exactly these details and nothing else.
import { el } from '../dom.ts';
import type { PendingRequest } from '../types.ts';

const BOUND_DETAILS_TEXT = 'This approval is bound to exactly these details.';

/** The block for the card, or null when the request carries no bound details. */
export function boundDetailsBlock(p: PendingRequest): HTMLElement | null {
  const summary = p.details?.summary;
  if (typeof summary !== 'string' || summary === '') return null;
  return el('figure', { className: 'binding bound-details' },
    el('figcaption', { className: 'binding-label', text: 'Details' }),
    el('blockquote', { className: 'details-summary', text: summary }),
    el('p', { className: 'hint', text: BOUND_DETAILS_TEXT }));
}
