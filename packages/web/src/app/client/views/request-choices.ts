// The controls of an access request card that let the owner give less than asked: scopes and
// user-info fields to untick, and limits (when access ends, how many passes it may issue).
import { userError } from '../api.ts';
import { el } from '../dom.ts';
import { duration, userInfoLabel } from '../format.ts';

export const EXPIRY_CHOICES: readonly [seconds: number, label: string][] = [
  [0, 'no end date'],
  [3600, '1 hour'],
  [86400, '1 day'],
  [7 * 86400, '7 days'],
  [30 * 86400, '30 days'],
  [365 * 86400, '1 year'],
];

export interface Choices {
  scopes: string[];
  user_info: string[];
  limits?: { expires_in?: number; max_uses?: number };
}

function checkboxes(legend: string, names: string[], kind: 'scope' | 'user_info'): HTMLFieldSetElement | null {
  if (!names.length) return null;
  return el('fieldset', { className: 'choices' },
    el('legend', { text: legend }),
    ...names.map((name) => el('label', { className: 'check' },
      el('input', { type: 'checkbox', checked: true, value: name, 'data-kind': kind }),
      el('span', {}, el('span', { className: 'code', text: name }), kind === 'user_info' && userInfoLabel(name) !== name ? el('span', { className: 'hint', text: ` (${userInfoLabel(name)})` }) : null))));
}

/** `passes: false` (a sign-in): only when access ends; a sign-in's grant issues no passes. */
function limitsControls(opts: { passes: boolean }): HTMLDetailsElement {
  const expires = el('select', { className: 'limit-expires', 'aria-label': 'Access ends after' },
    ...EXPIRY_CHOICES.map(([sec, label]) => el('option', { value: sec ? String(sec) : '', text: label })));
  const uses = opts.passes
    ? el('input', { type: 'number', className: 'limit-uses', min: '1', step: '1', inputmode: 'numeric', placeholder: 'unlimited', 'aria-label': 'Maximum number of passes' })
    : null;
  const summary = el('summary', {});
  const describeLimits = () => {
    const sec = Number(expires.value);
    const ends = sec ? `ends after ${duration(sec)}` : 'no end date';
    if (!uses) {
      summary.textContent = `Limits: ${ends}`;
      return;
    }
    const n = uses.value.trim();
    summary.textContent = `Limits: ${ends}, ${n ? `${n} pass${n === '1' ? '' : 'es'}` : 'unlimited passes'}`;
  };
  expires.addEventListener('change', describeLimits);
  uses?.addEventListener('input', describeLimits);
  describeLimits();
  return el('details', { className: 'limits' },
    summary,
    el('label', {}, 'Access ends after', expires),
    uses && el('label', {}, 'Maximum number of passes', el('small', { text: ' (each pass lasts at most 10 minutes)' }), uses),
    uses ? null : el('p', { className: 'hint', text: 'Until then, this agent signs in to this site again without asking you.' }));
}

/** The narrowing and limit controls of an access request. */
export function choiceControls(scopes: string[], userInfo: string[]): HTMLElement[] {
  return [
    checkboxes('It may', scopes, 'scope'),
    checkboxes('It may see', userInfo, 'user_info'),
    el('p', { className: 'hint', text: 'Untick anything you do not want to give.' }),
    limitsControls({ passes: true }),
  ].filter((n): n is HTMLFieldSetElement | HTMLParagraphElement | HTMLDetailsElement => n !== null);
}

/**
 * The controls of a sign-in: the OIDC scopes are not choices (the sign-in needs them as asked), but
 * what the site may see about the owner (email, phone) may be unticked, and access may end.
 */
export function signInChoiceControls(userInfo: string[]): HTMLElement[] {
  return [
    checkboxes('It may also see', userInfo, 'user_info'),
    userInfo.length ? el('p', { className: 'hint', text: 'Untick anything you do not want the site to see.' }) : null,
    limitsControls({ passes: false }),
  ].filter((n): n is HTMLFieldSetElement | HTMLParagraphElement | HTMLDetailsElement => n !== null);
}

/**
 * What the owner chose on the card; throws a readable error for an impossible choice. `fixedScopes`:
 * the scopes are not choices on this card (a sign-in), they go as asked.
 */
export function readChoices(card: HTMLElement, fixedScopes?: string[]): Choices {
  const ticked = (kind: string) =>
    [...card.querySelectorAll<HTMLInputElement>(`input[data-kind="${kind}"]`)].filter((i) => i.checked).map((i) => i.value);
  const scopes = fixedScopes ?? ticked('scope');
  if (!scopes.length) throw userError('Keep at least one thing it may do, or deny the request.');
  const out: Choices = { scopes, user_info: ticked('user_info') };
  const limits: NonNullable<Choices['limits']> = {};
  const expires = card.querySelector<HTMLSelectElement>('.limit-expires');
  if (expires?.value) limits.expires_in = Number(expires.value);
  const uses = card.querySelector<HTMLInputElement>('.limit-uses');
  if (uses && uses.value.trim() !== '') {
    const n = Number(uses.value);
    if (!Number.isInteger(n) || n < 1) throw userError('The maximum number of passes must be a whole number of at least 1, or empty for no limit.');
    limits.max_uses = n;
  }
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}
