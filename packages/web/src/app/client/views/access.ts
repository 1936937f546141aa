// "Access you have given": one card per live grant. The owner may stop sharing a user-info field
// (narrowing) or revoke the grant; both take a confirm step.
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, byId, el } from '../dom.ts';
import { plural, userInfoLabel, when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Grant } from '../types.ts';

let shownKey = '';

function limitsText(g: Grant): string {
  return [
    `given ${when(g.created_at)}`,
    g.expires_at ? `ends ${when(g.expires_at)}` : 'no end date',
    g.uses_left === null ? 'unlimited passes' : `${plural(g.uses_left, 'pass', 'passes')} left`,
  ].join(' · ');
}

function grantCard(g: Grant): HTMLElement {
  const agent = g.agent_name;
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const revoke = button('Revoke access', 'danger revoke', { 'aria-label': `Revoke ${agent} at ${g.site}` });
  const actions = el('div', { className: 'row actions' }, revoke);

  const fields = g.user_info.map((name) => {
    const stop = button('Stop sharing', 'link danger-link', { 'aria-label': `Stop sharing ${name} with ${agent} at ${g.site}` });
    const row = el('li', {}, el('span', {}, el('span', { className: 'code', text: name }), el('span', { className: 'hint', text: ` (${userInfoLabel(name)})` })), stop);
    stop.addEventListener('click', async () => {
      const rowActions = el('div', { className: 'row actions inline-confirm' });
      row.after(rowActions);
      const yes = await confirmInline(rowActions, `Stop sharing ${userInfoLabel(name)} with ${agent} at ${g.site}? To share it again, the agent has to ask again.`, 'Stop sharing');
      rowActions.remove();
      if (!yes) return;
      await run(stop, 'Stopping…', async () => {
        await api('PATCH', `/api/grants/${seg(g.id)}/user-info`, { user_info: g.user_info.filter((n) => n !== name) });
        show(`${name} is no longer shared with ${agent} at ${g.site}. The next pass carries it no more.`, 'ok');
        await reload('me', 'activity');
      }, { errorNode });
    });
    return row;
  });

  revoke.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Revoke ${agent}'s access to ${g.site}? It stops working at once.`, 'Revoke'))) return;
    await run(revoke, 'Revoking…', async () => {
      await api('POST', `/api/grants/${seg(g.id)}/revoke`);
      show(`${agent}'s access to ${g.site} is revoked.`, 'ok');
      await reload('me', 'activity');
    }, { errorNode });
  });

  return el('article', { className: 'card grant', 'data-grant': g.id, 'aria-label': `${agent} at ${g.site}` },
    el('h3', {}, el('strong', { text: agent }), ' at ', el('span', { className: 'site', text: g.site })),
    el('p', { className: 'may' }, el('span', { className: 'label', text: 'May ' }), ...g.scopes.map((s) => el('span', { className: 'code chip', text: s }))),
    g.user_info.length
      ? el('div', { className: 'may-see' }, el('span', { className: 'label', text: 'May see' }), el('ul', { className: 'fields' }, ...fields))
      : el('p', { className: 'meta no-info', text: 'Sees nothing about you.' }),
    el('p', { className: 'meta', text: limitsText(g) }),
    errorNode,
    actions);
}

/** A confirm step the owner is looking at must not be wiped by a refresh. */
const interacting = (): boolean => Boolean(byId('grants', HTMLElement).querySelector('.confirming'));

export function renderGrants(grants: Grant[]): void {
  // The next refresh (a few seconds later) renders what changed meanwhile.
  if (interacting()) return;
  const key = JSON.stringify(grants);
  if (key === shownKey) return;
  shownKey = key;
  byId('grants-empty', HTMLElement).hidden = grants.length > 0;
  byId('grants', HTMLElement).replaceChildren(...grants.map(grantCard));
}

export function resetGrants(): void {
  shownKey = '';
  byId('grants', HTMLElement).replaceChildren();
}
