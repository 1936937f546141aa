// One site the owner runs (an OIDC client): its client id, redirect URIs, whether it is verified
// and how to verify it, and editing, a new secret or deleting it (each change confirmed first
// where it cannot be undone).
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { day, when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { OidcClient } from '../types.ts';
import { copyButton } from './agent-card.ts';
import { siteEditForm } from './site-edit.ts';
import { hideSecret, showSecret } from './site-secret.ts';

/** The card of a client, after the list was drawn again: keyboard users keep their place. */
export function focusClient(clientId: string): void {
  const card = [...document.querySelectorAll<HTMLElement>('#sites article[data-client]')].find((a) => a.dataset.client === clientId);
  card?.focus({ preventScroll: true });
  card?.scrollIntoView({ block: 'nearest' });
}

/** Only web addresses become links: the URL comes from the server, but a link must never run script. */
const link = (url: string): HTMLElement =>
  (/^https?:\/\//i.test(url) ? el('a', { href: url, target: '_blank', rel: 'noopener noreferrer', className: 'code', text: url }) : el('span', { className: 'code', text: url }));

const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

/** The files to put the line in: one per site of the redirect URIs; those already checked say so. */
function files(c: OidcClient): (Node | string)[] {
  const { urls } = c.verification;
  if (urls.length === 1) return [' in the file at ', link(urls[0] ?? '')];
  return [' in each of these files:', el('ul', { className: 'uris verify-files' }, ...urls.map((u) =>
    el('li', {}, link(u), c.verified_origins.includes(originOf(u)) ? el('span', { className: 'verified-mark', text: ' (verified)' }) : null)))];
}

function verifySteps(c: OidcClient, check: HTMLButtonElement): HTMLElement {
  const v = c.verification;
  // Development redirect URIs only (http: on localhost): nothing outside the owner's machine can be checked.
  if (v.urls.length === 0) {
    return el('div', { className: 'notice site-verify' },
      el('p', {}, el('strong', { text: 'Nothing to verify yet.' }), ' Its redirect URIs are all for development (http://localhost and the like), so people see "unverified site" when their agent signs in. Add your site\'s https: redirect URI to verify it.'));
  }
  const done = c.verified_origins.length;
  return el('div', { className: 'notice site-verify' },
    el('p', {}, el('strong', { text: done ? `Verified for ${done} of ${v.urls.length} sites.` : 'Not verified yet.' }),
      ' Until you prove you run it, people see "unverified site" when their agent signs in there.'),
    el('ol', { className: 'steps' },
      el('li', {}, 'Put this line, on a line of its own,', ...files(c),
        el('div', { className: 'command' }, el('code', { className: 'verify-line', text: v.line }), copyButton(v.line, `the verification line of ${c.name}`))),
      el('li', {}, 'Then check it:', el('div', { className: 'row' }, check))));
}

const uriList = (uris: string[]): HTMLElement => el('ul', { className: 'uris' }, ...uris.map((u) => el('li', { className: 'code', text: u })));

function facts(c: OidcClient): HTMLElement {
  return el('dl', { className: 'facts' },
    el('dt', { text: 'Kind' }), el('dd', { text: c.public ? 'Public: no secret (a browser or mobile app)' : 'Confidential: signs in with its secret' }),
    el('dt', { text: 'Redirect URIs' }), el('dd', {}, uriList(c.redirect_uris)),
    el('dt', { text: 'Logout URI' }), el('dd', { className: c.backchannel_logout_uri ? 'code' : '', text: c.backchannel_logout_uri ?? 'none (no back-channel logout)' }),
    c.secret_set_at ? el('dt', { text: 'Secret' }) : null, c.secret_set_at ? el('dd', { text: `made ${when(c.secret_set_at)}` }) : null,
    el('dt', { text: 'Added' }), el('dd', { text: day(c.created_at) }));
}

export function siteCard(c: OidcClient): HTMLElement {
  const { verified } = c;
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const check = button('Check now', 'site-check', { 'aria-label': `Check now that you run ${c.name}` });
  const edit = button('Edit', 'secondary site-edit-button', { 'aria-label': `Edit ${c.name}` });
  const rotate = c.public ? null : button('New secret', 'secondary site-rotate', { 'aria-label': `Make a new secret for ${c.name}` });
  const remove = button('Delete', 'danger site-delete', { 'aria-label': `Delete ${c.name}` });
  const actions = el('div', { className: 'row actions' }, edit, rotate, remove);
  const body = el('div', { className: 'site-body' }, facts(c), c.verified ? null : verifySteps(c, check));
  const card = el('article', { className: `card site-client${verified ? ' verified' : ''}`, 'data-client': c.client_id, 'aria-label': c.name, tabindex: -1 },
    el('div', { className: 'card-top' }, el('h3', { text: c.name }),
      el('span', { className: `flag ${verified ? 'ok' : 'unverified'}`, text: verified ? 'Verified' : 'Not verified' })),
    el('p', { className: 'meta' }, 'Client id ', el('span', { className: 'code client-id', text: c.client_id }), ' ', copyButton(c.client_id, `the client id of ${c.name}`)),
    verified && c.verified_at ? el('p', { className: 'meta', text: `Verified ${when(c.verified_at)}` }) : null,
    body, errorNode, actions);

  check.addEventListener('click', () => void run(check, 'Checking…', async () => {
    // A 400 names each file and what was found there: shown on the card as the service says it.
    await api('POST', `/api/oidc/clients/${seg(c.client_id)}/verify`);
    show(`"${c.name}" is verified: people no longer see "unverified site" there.`, 'ok');
    await reload('sites');
    focusClient(c.client_id);
  }, { errorNode }));

  edit.addEventListener('click', () => {
    errorNode.hidden = true;
    const form = siteEditForm(c, errorNode, (saved) => {
      if (saved) {
        focusClient(c.client_id);
        return;
      }
      form.replaceWith(body);
      actions.hidden = false;
      errorNode.hidden = true;
      edit.focus();
    });
    body.replaceWith(form);
    actions.hidden = true;
    form.querySelector('input')?.focus();
  });

  rotate?.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Make a new secret for ${c.name}? The current secret stops working: your site cannot sign people in until it uses the new one.`, 'Make a new secret'))) return;
    await run(rotate, 'Making a new secret…', async () => {
      const answer = await api<{ client_secret: string }>('POST', `/api/oidc/clients/${seg(c.client_id)}/secret`);
      showSecret(c, answer.client_secret, true);
    }, { errorNode });
  });

  remove.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Delete ${c.name}? Its client id and secret stop working at once: nobody can sign in there with their agent any more.`, 'Delete for good'))) return;
    await run(remove, 'Deleting…', async () => {
      await api('DELETE', `/api/oidc/clients/${seg(c.client_id)}`);
      hideSecret(c.client_id);
      show(`"${c.name}" is deleted.`, 'ok');
      await reload('sites');
      // Its card, and the button that had the focus, are gone: the keyboard goes back to the top.
      document.getElementById('sites-title')?.focus({ preventScroll: true });
    }, { errorNode });
  });

  return card;
}
