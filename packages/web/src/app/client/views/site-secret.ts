// The one moment a client secret is on screen: after registering a confidential client and after
// making a new secret. The service keeps only a hash, so the box says plainly that this is the only
// chance to copy it; nothing keeps it afterwards (a reload, "I have saved it" or signing out clear it).
import { byId, el, button } from '../dom.ts';
import { copyButton } from './agent-card.ts';

/** The client whose secret is shown, so deleting that client can take the box away too. */
let shownFor: string | null = null;

export function showSecret(client: { client_id: string; name: string }, secret: string, rotated: boolean): void {
  const box = byId('site-secret', HTMLElement);
  const done = button('I have saved it', 'secondary site-secret-done');
  done.addEventListener('click', () => {
    hideSecret();
    byId('sites-title', HTMLElement).focus();
  });
  box.replaceChildren(
    el('h2', { id: 'site-secret-title', text: rotated ? `New client secret for ${client.name}` : `Client secret for ${client.name}` }),
    el('p', { className: 'secret-warning' }, el('strong', { text: 'Copy it now: it will not be shown again.' }),
      ' Mandate cannot show it to you again. Put it in your site\'s settings; if you lose it, make a new one.'),
    el('div', { className: 'command secret' }, el('code', { className: 'secret-value', text: secret }), copyButton(secret, `the client secret of ${client.name}`)),
    ...(rotated ? [el('p', { className: 'hint', text: 'The old secret no longer works: sign-ins at your site fail until it uses this one.' })] : []),
    el('div', { className: 'row' }, done),
  );
  box.hidden = false;
  shownFor = client.client_id;
  // The box is what matters now: keyboard and screen reader land on it, and it is on screen.
  box.focus({ preventScroll: true });
  box.scrollIntoView({ block: 'nearest' });
}

/** Clears the secret from the page (of that client only, when one is named). */
export function hideSecret(clientId?: string): void {
  if (clientId && clientId !== shownFor) return;
  const box = byId('site-secret', HTMLElement);
  box.replaceChildren();
  box.hidden = true;
  shownFor = null;
}
