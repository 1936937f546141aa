// Identity providers (decisions §15): the sign-in page's "Sign in with <label>" buttons, Account's
// "Sign-in providers" (Link / Unlink) and the list the request cards read for "Approve with <label>".
// Linking and signing in leave the app for the provider, which sends the browser back to
// /app#...?oauth=... (identity-return.ts says how it went).
import { api, seg } from '../api.ts';
import { report, run } from '../actions.ts';
import { button, byId, el } from '../dom.ts';
import { show } from '../message.ts';

export interface ProviderView {
  name: string;
  label: string;
  linked: boolean;
}

let providers: ProviderView[] = [];
const listeners: (() => void)[] = [];

/** The providers linked to the signed-in owner: what a request card offers to approve with. */
export const linkedProviders = (): ProviderView[] => providers.filter((p) => p.linked);

/** Called whenever the list changes (the cards redraw their buttons). */
export function onProvidersChanged(listener: () => void): void {
  listeners.push(listener);
}

/** A configured provider's label; null for a name the service does not have (a crafted address). */
export const providerLabel = (name: string): string | null => providers.find((p) => p.name === name)?.label ?? null;

/** Where the browser goes to link (signed in) or sign in (signed out) with a provider. */
const startUrl = (name: string): string => `/api/oauth/${seg(name)}/start`;

/** GET /api/oauth/providers: works signed out too (every `linked` false). Quiet when it fails: the buttons are extras. */
export async function loadProviders(): Promise<void> {
  try {
    providers = await api<ProviderView[]>('GET', '/api/oauth/providers');
  } catch {
    providers = [];
  }
  render();
}

export function resetProviders(): void {
  providers = providers.map((p) => ({ ...p, linked: false }));
  render();
}

function render(): void {
  renderSignIn();
  renderAccount();
  for (const l of listeners) l();
}

function renderSignIn(): void {
  const box = byId('idp-signin', HTMLElement);
  box.hidden = providers.length === 0;
  byId('idp-signin-buttons', HTMLElement).replaceChildren(...providers.map((p) => {
    const b = button(`Sign in with ${p.label}`, 'secondary idp-signin', { 'data-provider': p.name });
    b.addEventListener('click', () => {
      b.disabled = true;
      b.textContent = `Opening ${p.label}…`;
      location.assign(startUrl(p.name));
    });
    return b;
  }));
}

function renderAccount(): void {
  const card = byId('idp-card', HTMLElement);
  card.hidden = providers.length === 0;
  const errorNode = byId('idp-error', HTMLElement);
  byId('idp-list', HTMLElement).replaceChildren(...providers.map((p) => {
    const state = el('span', { className: `idp-state ${p.linked ? 'linked' : ''}`, text: p.linked ? 'Linked' : 'Not linked' });
    const action = p.linked ? button('Unlink', 'secondary idp-unlink') : button('Link', 'idp-link');
    action.addEventListener('click', () => {
      errorNode.hidden = true;
      if (!p.linked) {
        action.disabled = true;
        action.textContent = `Opening ${p.label}…`;
        location.assign(startUrl(p.name));
        return;
      }
      void run(action, 'Unlinking…', async () => {
        try {
          await api('DELETE', `/api/oauth/${seg(p.name)}`);
        } catch (e) {
          await report(e, errorNode);
          return;
        }
        await loadProviders();
        show(`${p.label} is unlinked: it no longer signs you in or approves requests.`, 'ok');
      });
    });
    return el('li', { className: 'idp-item', 'data-provider': p.name }, el('strong', { text: p.label }), ' ', state, ' ', action);
  }));
}
