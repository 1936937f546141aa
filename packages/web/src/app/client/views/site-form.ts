// "Register a site": a website that lets people sign in with their agent (OpenID Connect) becomes
// one of the owner's clients. A confidential client gets a secret, shown once; a public one (a
// browser or mobile app, which cannot keep a secret) gets none and relies on PKCE alone.
import { api, userError } from '../api.ts';
import { run } from '../actions.ts';
import { byId } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { OidcClientCreated } from '../types.ts';
import { focusClient } from './site-card.ts';
import { NO_NAME, NO_URIS, uriLines } from './site-fields.ts';
import { showSecret } from './site-secret.ts';

export function setUpSiteForm(): void {
  const form = byId('site-form', HTMLFormElement);
  const name = byId('site-name', HTMLInputElement);
  const redirects = byId('site-redirects', HTMLTextAreaElement);
  const logout = byId('site-logout', HTMLInputElement);
  const isPublic = byId('site-public', HTMLInputElement);
  const submit = byId('site-register-button', HTMLButtonElement);
  const errorNode = byId('site-form-error', HTMLElement);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(submit, 'Registering…', async () => {
      const body = {
        name: name.value.trim(),
        redirect_uris: uriLines(redirects.value),
        ...(logout.value.trim() ? { backchannel_logout_uri: logout.value.trim() } : {}),
        public: isPublic.checked,
      };
      if (!body.name) throw userError(NO_NAME);
      if (!body.redirect_uris.length) throw userError(NO_URIS);
      const created = await api<OidcClientCreated>('POST', '/api/oidc/clients', body);
      form.reset();
      await reload('sites');
      const next = created.verification.urls.length ? ' Next, prove you run it: follow "Not verified yet" on its card.' : '';
      show(`"${created.name}" is registered. It works at once.${next}`, 'ok');
      // After the message, so the secret (or the new card) is what ends up on screen and focused.
      if (created.client_secret) showSecret(created, created.client_secret, false);
      else focusClient(created.client_id);
    }, { errorNode, also: [name, redirects, logout, isPublic] });
  });
}

export function resetSiteForm(): void {
  byId('site-form', HTMLFormElement).reset();
  byId('site-form-error', HTMLElement).hidden = true;
}
