// The parts of a request card that make an OIDC sign-in read as one: who signs in where, whether
// the site proved it runs that address, the site's own message (CIBA) exactly as written, and what
// the site will learn. Everything is set as text: a site's name and message are never markup.
import { el } from '../dom.ts';
import { userInfoLabel } from '../format.ts';
import type { PendingRequest, SignInRequest } from '../types.ts';
import type { Choices } from './request-choices.ts';
import { signInChoiceControls } from './request-choices.ts';

export const signInKindLabel = (s: SignInRequest): string => (s.flow === 'ciba' ? 'Sign-in asked by the site' : 'Sign-in');

export function signInHeading(p: PendingRequest, s: SignInRequest): HTMLHeadingElement {
  return el('h3', {},
    el('strong', { text: p.agent }), ' wants to sign in to ',
    el('span', { className: 'client-name', text: s.client_name }), ' (', el('span', { className: 'site', text: p.site }), ')');
}

/** Verified: one quiet line. Unverified: a clear (amber, not red) note saying what is not proven. */
function siteCheck(p: PendingRequest, s: SignInRequest): HTMLElement {
  if (s.verified) return el('p', { className: 'site-check verified', text: `Verified: ${s.client_name} proved it runs ${p.site}.` });
  return el('div', { className: 'site-check unverified', role: 'note' },
    el('p', {}, el('strong', { text: 'Unverified site. ' }), `${s.client_name} has not proved that it runs ${p.site}.`),
    el('p', { text: `Approve only if you expect ${p.agent} to sign in there.` }));
}

/** CIBA: the site's message, to compare with what the site shows; verbatim, in its own box. */
function bindingBox(s: SignInRequest): HTMLElement | null {
  if (s.binding_message === null || s.binding_message === '') return null;
  return el('figure', { className: 'binding', 'aria-label': 'The site says' },
    el('figcaption', { className: 'binding-label', text: 'The site says:' }),
    el('blockquote', { className: 'binding-message', text: s.binding_message }),
    el('p', { className: 'hint', text: `Approve only if ${s.client_name} shows you this same message.` }));
}

const SCOPE_TEXT: Record<string, string> = {
  openid: 'that it is your agent, by an identifier used only at this site',
  profile: 'its name, as your agent',
  email: 'your email address',
  phone: 'your phone number',
};

/** What the site learns by the scopes (email and phone come as the user-info choices below). */
function shares(p: PendingRequest, s: SignInRequest): HTMLElement {
  const seen = new Set(p.user_info.map((n) => n.replace(/^user:/, '')));
  const items = p.scopes
    .filter((scope) => !seen.has(scope))
    .map((scope) => el('li', {}, SCOPE_TEXT[scope] ?? userInfoLabel(scope), el('span', { className: 'code hint', text: ` (${scope})` })));
  return el('div', { className: 'shares' },
    el('p', { className: 'shares-label', text: `${s.client_name} will learn` }),
    el('ul', { className: 'shares-list' }, ...items));
}

export function signInBody(p: PendingRequest, s: SignInRequest): HTMLElement[] {
  return [siteCheck(p, s), bindingBox(s), shares(p, s), ...signInChoiceControls(p.user_info)].filter((n): n is HTMLElement => n !== null);
}

export function signInOutcome(p: PendingRequest, s: SignInRequest, approved: boolean, choices: Choices | undefined): string {
  if (!approved) return `Denied. ${p.agent} is not signed in to ${s.client_name} (${p.site}).`;
  const info = choices?.user_info ?? p.user_info;
  return `Approved. ${p.agent} may sign in to ${s.client_name} (${p.site})${info.length ? `, which will see ${info.map(userInfoLabel).join(', ')}` : ''}.`;
}
