// Editing a registered site in place: its name, redirect URIs and back-channel logout URI. The
// client id and the secret stay as they are.
import { api, seg, userError } from '../api.ts';
import { run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { OidcClient } from '../types.ts';
import { NO_NAME, NO_URIS, uriLines } from './site-fields.ts';

/** The PATCH body: what the form holds; an emptied logout URI is removed (null), an absent one left alone. */
function patchBody(c: OidcClient, name: string, redirects: string, logout: string): Record<string, unknown> {
  const body: Record<string, unknown> = { name: name.trim(), redirect_uris: uriLines(redirects) };
  const uri = logout.trim();
  if (uri) body.backchannel_logout_uri = uri;
  else if (c.backchannel_logout_uri) body.backchannel_logout_uri = null;
  return body;
}

/**
 * The edit form of one site's card. `close` is called on Cancel (false), or once the saved site is
 * listed again (true: the card it sits in has been replaced by then). Errors go to the card's error line.
 */
export function siteEditForm(c: OidcClient, errorNode: HTMLElement, close: (saved: boolean) => void): HTMLFormElement {
  const name = el('input', { name: 'name', value: c.name, maxlength: 100, required: true, autocomplete: 'off' });
  const redirects = el('textarea', { name: 'redirect_uris', rows: Math.min(6, Math.max(2, c.redirect_uris.length + 1)), spellcheck: 'false', autocomplete: 'off', required: true });
  redirects.value = c.redirect_uris.join('\n');
  const logout = el('input', { name: 'backchannel_logout_uri', type: 'url', value: c.backchannel_logout_uri ?? '', autocomplete: 'off', inputmode: 'url', placeholder: 'https://example.com/backchannel-logout' });
  const save = el('button', { type: 'submit', className: 'site-save', text: 'Save' });
  const cancel = button('Cancel', 'secondary site-cancel');
  const form = el('form', { className: 'site-edit', 'aria-label': `Edit ${c.name}` },
    el('label', {}, 'Name', name),
    el('label', {}, 'Redirect URIs ', el('small', { text: '(one per line)' }), redirects),
    el('label', {}, 'Back-channel logout URI ', el('small', { text: '(optional)' }), logout),
    el('div', { className: 'row' }, save, cancel));
  cancel.addEventListener('click', () => close(false));
  // Escape leaves the form without saving, as Cancel does (not while a save is on its way).
  form.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && !save.disabled) close(false);
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(save, 'Saving…', async () => {
      const body = patchBody(c, name.value, redirects.value, logout.value);
      if (!body.name) throw userError(NO_NAME);
      if (!(body.redirect_uris as string[]).length) throw userError(NO_URIS);
      await api('PATCH', `/api/oidc/clients/${seg(c.client_id)}`, body);
      show(`"${String(body.name)}" is saved.`, 'ok');
      form.classList.add('saved');
      await reload('sites');
      close(true);
    }, { errorNode, also: [cancel, name, redirects, logout] });
  });
  return form;
}
