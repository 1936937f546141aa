// The banner above every view while the owner's email is unverified: "Verify your email <address>"
// with "Send link". "Not now" hides it for the rest of this session in this tab (sessionStorage, so
// a reload keeps it hidden; a new tab, or signing out and in again, shows it again), and for this
// address only: a changed address asks anew. The Account view has the same in its email card, so
// the banner steps aside there.
import { button, byId, el } from '../dom.ts';
import { parseRoute } from '../router.ts';
import { session } from '../session.ts';
import { emailNeedsVerifying, emailState, onEmailState } from './email-state.ts';
import { sendLinkControl } from './email-link.ts';

const DISMISSED_KEY = 'mandate.email-banner-dismissed';
/** When storage is off (a private window, a policy), the dismissal lasts as long as the page. */
let dismissedHere = '';

const dismissalKey = (): string => `${session.userId}|${emailState().email}`;

function dismissed(): boolean {
  try {
    return sessionStorage.getItem(DISMISSED_KEY) === dismissalKey();
  } catch {
    return dismissedHere === dismissalKey();
  }
}

function dismiss(): void {
  dismissedHere = dismissalKey();
  try {
    sessionStorage.setItem(DISMISSED_KEY, dismissedHere);
  } catch {
    // kept in memory above
  }
}

const banner = (): HTMLElement => byId('email-banner', HTMLElement);

function update(): void {
  const onAccount = parseRoute(location.hash).view === 'account';
  banner().hidden = !emailNeedsVerifying() || dismissed() || onAccount;
  byId('email-banner-address', HTMLElement).textContent = emailState().email;
}

export function setUpEmailBanner(): void {
  const later = button('Not now', 'link email-banner-dismiss');
  const send = sendLinkControl();
  send.node.querySelector('.row')?.append(later);
  banner().replaceChildren(
    el('p', { className: 'email-banner-title' },
      el('strong', { id: 'email-banner-title', text: 'Verify your email' }), ' ',
      el('span', { id: 'email-banner-address', className: 'email-banner-address' })),
    el('p', { className: 'hint', text: 'Until you do, Mandate cannot share it with sites you approve, nor mail you about your account.' }),
    send.node);
  later.addEventListener('click', () => {
    dismiss();
    update();
  });
  onEmailState(update);
  window.addEventListener('hashchange', update);
}

/** Signed out: gone, "Not now" forgotten, and a status line from before is not shown to the next person. */
export function resetEmailBanner(): void {
  dismissedHere = '';
  try {
    sessionStorage.removeItem(DISMISSED_KEY);
  } catch {
    // nothing kept
  }
  banner().hidden = true;
  for (const status of banner().querySelectorAll<HTMLElement>('.send-link-status')) status.hidden = true;
}
