// "Sites you run" (#sites, opened from Account): for owners of websites that let people sign in
// with their agent (OpenID Connect). Lists the owner's clients with how to verify each, and
// registers new ones (site-form.ts); one card per client (site-card.ts).
import { api } from '../api.ts';
import { byId } from '../dom.ts';
import type { OidcClient } from '../types.ts';
import { siteCard } from './site-card.ts';
import { resetSiteForm, setUpSiteForm } from './site-form.ts';
import { hideSecret } from './site-secret.ts';

export async function loadSites(): Promise<void> {
  const clients = await api<OidcClient[]>('GET', '/api/oidc/clients');
  const list = byId('sites', HTMLElement);
  // A card being edited is not redrawn under the owner's hands (another card's "Check now" reloads
  // the list): it stays as it is until Save or Cancel. A saved form is marked, and is redrawn.
  const editing = new Map<string, HTMLElement>();
  for (const card of list.querySelectorAll<HTMLElement>('article[data-client]')) {
    if (card.querySelector('form.site-edit:not(.saved)') && card.dataset.client) editing.set(card.dataset.client, card);
  }
  list.replaceChildren(...clients.map((c) => editing.get(c.client_id) ?? siteCard(c)));
  byId('sites-empty', HTMLElement).hidden = clients.length > 0;
}

export function setUpSites(): void {
  setUpSiteForm();
}

export function resetSites(): void {
  byId('sites', HTMLElement).replaceChildren();
  byId('sites-empty', HTMLElement).hidden = true;
  hideSecret();
  resetSiteForm();
}
