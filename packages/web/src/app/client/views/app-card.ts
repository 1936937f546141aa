// One connected app (decisions §28): an MCP client or other OAuth app the owner approved in the
// browser. It has no key, so nothing about keys, pairing or take-overs is shown: who it is (its name
// and the host of its client_id), each resource it may act at with its scopes and when that was
// approved, and revoking one resource or the whole app, each after a confirm step.
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { REFUSED_WHEN, day, when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Agent, Grant } from '../types.ts';
import { copyButton } from './agent-card.ts';

/** Does the app's name carry its host already? The browser approval names an app "<client name> (<host>)". */
const namesHost = (name: string, host: string | null | undefined): boolean => Boolean(host && name.endsWith(`(${host})`));

/** "Claude (claude.ai)": the name with the host of its client id, once; the bare name when there is no host. */
export const appLabel = (name: string, host: string | null | undefined): string => (!host || namesHost(name, host) ? name : `${name} (${host})`);

/** Where a grant lets the app act: its resource URL, or the site for a grant without one (a plain sign-in). */
export const grantPlace = (g: Grant): string => g.resource ?? g.site;

/** The stop sentence for one resource: the same promise the Access view makes for one site. */
const STOPS = "refuses its passes at once if it checks with Mandate; if it checks passes itself, within a second while connected to Mandate's revocation stream, within a minute otherwise";

function resourceRow(app: Agent, g: Grant, errorNode: HTMLElement): HTMLElement {
  const place = grantPlace(g);
  const revoke = button('Revoke', 'danger revoke-resource', { 'aria-label': `Revoke ${app.name} at ${place}` });
  const actions = el('div', { className: 'row actions' }, revoke);
  const scopes = g.scopes.length
    ? el('p', { className: 'may' }, el('span', { className: 'label', text: 'May ' }), ...g.scopes.map((s) => el('span', { className: 'code chip', text: s })))
    : el('p', { className: 'may meta', text: 'No scopes: it may only call what needs none.' });
  revoke.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Revoke ${app.name} at ${place}? That server ${STOPS}. The app keeps what it may do elsewhere.`, 'Revoke'))) return;
    await run(revoke, 'Revoking…', async () => {
      await api('POST', `/api/grants/${seg(g.id)}/revoke`);
      show(`${app.name} may no longer act at ${place}: that server ${STOPS}.`, 'ok');
      await reload('agents', 'me', 'activity');
    }, { errorNode });
  });
  return el('li', { className: 'app-resource', 'data-grant': g.id, 'aria-label': place },
    el('p', { className: 'resource' }, el('span', { className: 'code resource-url', text: place })),
    scopes,
    el('p', { className: 'meta approved', text: `Approved ${when(g.created_at)}${g.expires_at ? ` · ends ${when(g.expires_at)}` : ''}` }),
    actions);
}

/** The app's card; `grants` are its live grants (the owner's grants of this agent). */
export function appCard(a: Agent, grants: Grant[]): HTMLElement {
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const remove = button('Revoke app', 'danger revoke-app', { 'aria-label': `Revoke ${a.name}` });
  const blocked = a.flag === 'revoked';
  // Blocked through the agent flag (POST /api/agents/{id}/flag): the browser approval refuses a
  // blocked app, so the card offers the way back as for every agent.
  const unblock = blocked ? button('Unblock', 'secondary unblock', { 'aria-label': `Unblock ${a.name}` }) : null;
  const actions = el('div', { className: 'row actions' }, unblock, remove);

  unblock?.addEventListener('click', () => void run(unblock, 'Unblocking…', async () => {
    await api('POST', `/api/agents/${seg(a.id)}/flag`, { flag: 'ok' });
    show(`${a.name} is unblocked. It has to be approved again in your browser for each server.`, 'ok');
    await reload('agents', 'me', 'activity');
  }, { errorNode }));

  remove.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Revoke ${a.name}? It may no longer act for you anywhere: ${REFUSED_WHEN}. To use it again, you approve it again when it asks in your browser.`, 'Revoke app'))) return;
    await run(remove, 'Revoking…', async () => {
      // An app is removed like an agent: its grants are revoked and its passes refused; a new
      // approval in the browser makes a fresh app.
      await api('DELETE', `/api/agents/${seg(a.id)}`);
      show(`${a.name} is revoked: ${REFUSED_WHEN}.`, 'ok');
      await reload('agents', 'me', 'activity');
    }, { errorNode });
  });

  const titleId = `app-title-${a.id}`;
  return el('article', { className: `card agent app flag-${a.flag} status-${a.status}`, 'data-agent': a.id, 'aria-labelledby': titleId },
    el('div', { className: 'card-top' },
      el('div', { className: 'agent-title' }, el('h3', { id: titleId, text: a.name })),
      el('span', { className: `flag ${blocked ? 'revoked' : 'ok'}`, text: blocked ? 'Revoked' : 'Connected' })),
    blocked ? el('p', { className: 'notice', role: 'note', text: 'Revoked everywhere: every server refuses its passes.' }) : null,
    el('p', { className: 'meta' }, 'Client id ', el('span', { className: 'code client-id', text: a.client_id ?? '' }), ' ', copyButton(a.client_id ?? '', `the client id of ${a.name}`)),
    el('dl', { className: 'facts' },
      // The client id's host is the site that published the app; a registered client id names none.
      el('dt', { text: 'From' }), el('dd', { className: 'client-host', text: a.client_host ?? 'a client registered by id (no site of its own)' }),
      el('dt', { text: 'Connected' }), el('dd', { text: day(a.created_at) })),
    el('h4', { className: 'resources-title', text: 'May act at' }),
    grants.length
      ? el('ul', { className: 'app-resources', 'aria-label': `Where ${a.name} may act` }, ...grants.map((g) => resourceRow(a, g, errorNode)))
      : el('p', { className: 'meta no-resources', text: 'Nowhere now. When it needs access again, it asks you in your browser.' }),
    errorNode,
    actions);
}
