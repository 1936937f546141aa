// "Access you have given": one card per live grant, with the OIDC sign-ins standing on it. The owner
// may stop sharing a user-info field (narrowing) or revoke the grant (which also signs the agent out
// of those sites); both take a confirm step.
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, byId, el } from '../dom.ts';
import { plural, userInfoLabel, when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { ActivityPage, Grant, GrantSignIn } from '../types.ts';
import { grantPlace } from './app-card.ts';

let shownKey = '';
/** Has the owner ever given access (a grant seen, or an approval in Activity)? null until known. */
let gaveAccess: boolean | null = null;
let checkingHistory = false;
let hasAgents: boolean | null = null;

function limitsText(g: Grant): string {
  return [
    `given ${when(g.created_at)}`,
    g.expires_at ? `ends ${when(g.expires_at)}` : 'no end date',
    g.uses_left === null ? 'unlimited passes' : `${plural(g.uses_left, 'pass', 'passes')} left`,
  ].join(' · ');
}

/** More sites than this: the first ones, then "and N more". */
const MAX_SIGN_IN_LINES = 3;

/** The sign-ins by site (client): name, how many, since when (the earliest). */
function bySite(signIns: GrantSignIn[]): { name: string; count: number; since: string }[] {
  const sites = new Map<string, { name: string; count: number; since: string }>();
  for (const s of signIns) {
    const seen = sites.get(s.client_id);
    if (!seen) sites.set(s.client_id, { name: s.client_name, count: 1, since: s.created_at });
    else {
      seen.count += 1;
      if (Date.parse(s.created_at) < Date.parse(seen.since)) seen.since = s.created_at;
    }
  }
  return [...sites.values()];
}

/** "Signed in at Shop since …", one line per site. */
function signInLines(signIns: GrantSignIn[]): HTMLElement | null {
  const sites = bySite(signIns);
  if (!sites.length) return null;
  const shown = sites.length > MAX_SIGN_IN_LINES ? sites.slice(0, MAX_SIGN_IN_LINES - 1) : sites;
  const rest = sites.length - shown.length;
  return el('ul', { className: 'sign-ins', 'aria-label': 'Signed in' },
    ...shown.map((s) => el('li', {},
      'Signed in at ', el('strong', { text: s.name }), ` since ${when(s.since)}`,
      s.count > 1 ? el('span', { className: 'hint', text: ` (${plural(s.count, 'session')})` }) : null)),
    rest > 0 ? el('li', { className: 'more', text: `and at ${plural(rest, 'more site')}` }) : null);
}

/** "Shop" / "Shop and Books" / "Shop, Books and 2 more sites": for the revoke question. */
function siteNames(signIns: GrantSignIn[]): string {
  const names = bySite(signIns).map((s) => s.name);
  if (names.length <= 2) return names.join(' and ');
  if (names.length === 3) return `${names[0] ?? ''}, ${names[1] ?? ''} and ${names[2] ?? ''}`;
  return `${names.slice(0, 2).join(', ')} and ${plural(names.length - 2, 'more site')}`;
}

function grantCard(g: Grant): HTMLElement {
  const agent = g.agent_name;
  // A connected app's grant is for one resource URL (decisions §28): named by it, not only its host.
  const site = grantPlace(g);
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const revoke = button('Revoke access', 'danger revoke', { 'aria-label': `Revoke ${agent} at ${site}` });
  const actions = el('div', { className: 'row actions' }, revoke);

  const fields = g.user_info.map((name) => {
    const stop = button('Stop sharing', 'link danger-link', { 'aria-label': `Stop sharing ${name} with ${agent} at ${site}` });
    const row = el('li', {}, el('span', {}, el('span', { className: 'code', text: name }), el('span', { className: 'hint', text: ` (${userInfoLabel(name)})` })), stop);
    stop.addEventListener('click', async () => {
      const rowActions = el('div', { className: 'row actions inline-confirm' });
      row.after(rowActions);
      const yes = await confirmInline(rowActions, `Stop sharing ${userInfoLabel(name)} with ${agent} at ${site}? To share it again, the agent has to ask again.`, 'Stop sharing');
      rowActions.remove();
      if (!yes) return;
      await run(stop, 'Stopping…', async () => {
        await api('PATCH', `/api/grants/${seg(g.id)}/user-info`, { user_info: g.user_info.filter((n) => n !== name) });
        show(`${name} is no longer shared with ${agent} at ${site}. The next pass carries it no more.`, 'ok');
        await reload('me', 'activity');
      }, { errorNode });
    });
    return row;
  });

  const signIns = g.sign_ins;
  const signedOut = signIns.length ? siteNames(signIns) : '';
  revoke.addEventListener('click', async () => {
    // When it takes effect (format.ts REFUSED_WHEN, for one site).
    const stops = "refuses it at once if it checks with Mandate; if it checks passes itself, within a second while connected to Mandate's revocation stream, within a minute otherwise";
    const question = signedOut
      ? `Revoke ${agent}'s access to ${site}? The site ${stops}, and ${agent} is signed out of ${signedOut}.`
      : `Revoke ${agent}'s access to ${site}? The site ${stops}.`;
    if (!(await confirmInline(actions, question, signedOut ? 'Revoke and sign out' : 'Revoke'))) return;
    await run(revoke, 'Revoking…', async () => {
      await api('POST', `/api/grants/${seg(g.id)}/revoke`);
      const done = `${agent}'s access to ${site} is revoked: the site ${stops}`;
      show(signedOut ? `${done}. It is signed out of ${signedOut}.` : `${done}.`, 'ok');
      await reload('me', 'activity');
    }, { errorNode });
  });

  return el('article', { className: 'card grant', 'data-grant': g.id, 'aria-label': `${agent} at ${site}` },
    el('h3', {}, el('strong', { text: agent }), ' at ', el('span', { className: 'site', text: site })),
    el('p', { className: 'may' }, el('span', { className: 'label', text: 'May ' }), ...g.scopes.map((s) => el('span', { className: 'code chip', text: s }))),
    signInLines(signIns),
    g.user_info.length
      ? el('div', { className: 'may-see' }, el('span', { className: 'label', text: 'May see' }), el('ul', { className: 'fields' }, ...fields))
      : el('p', { className: 'meta no-info', text: 'Sees nothing about you.' }),
    el('p', { className: 'meta', text: limitsText(g) }),
    errorNode,
    actions);
}

/** A confirm step the owner is looking at must not be wiped by a refresh. */
const interacting = (): boolean => Boolean(byId('grants', HTMLElement).querySelector('.confirming'));

/**
 * The empty state tells what is true: access given before and ended since (revoked, expired, used
 * up), none given yet, or no agent to give it to yet.
 */
function renderEmpty(): void {
  const title = byId('grants-empty-title', HTMLElement);
  const text = byId('grants-empty-text', HTMLElement);
  if (gaveAccess) {
    title.textContent = 'No access is live now.';
    text.replaceChildren('What you gave before has ended: revoked, expired or used up (see ', el('a', { href: '#activity', text: 'Activity' }),
      '). An agent that needs access again asks you again.');
  } else if (hasAgents === false) {
    title.textContent = 'You have not given any access yet.';
    text.replaceChildren(el('a', { href: '#agents', text: 'Add an agent' }), ' first: access appears here when you approve one of its requests.');
  } else {
    title.textContent = 'You have not given any access yet.';
    text.replaceChildren('Access appears here when you approve a request from one of your agents.');
  }
}

/** Asks Activity once whether the owner ever approved access (grants that ended are no longer listed). */
async function checkHistory(): Promise<void> {
  if (gaveAccess !== null || checkingHistory) return;
  checkingHistory = true;
  try {
    const page = await api<ActivityPage>('GET', '/api/activity?limit=1&action=request.approved');
    gaveAccess ??= page.items.length > 0;
    renderEmpty();
  } catch {
    // Unknown for now: the neutral text stays, and the next refresh asks again.
  } finally {
    checkingHistory = false;
  }
}

/** Told whether the owner has agents (the empty state then says what to do first). */
export function setGrantsHasAgents(has: boolean): void {
  hasAgents = has;
  renderEmpty();
}

export function renderGrants(grants: Grant[]): void {
  if (grants.length > 0) gaveAccess = true;
  else void checkHistory();
  // The next refresh (a few seconds later) renders what changed meanwhile.
  if (interacting()) return;
  const key = JSON.stringify(grants);
  if (key === shownKey) return;
  shownKey = key;
  renderEmpty();
  byId('grants-empty', HTMLElement).hidden = grants.length > 0;
  byId('grants', HTMLElement).replaceChildren(...grants.map(grantCard));
}

export function resetGrants(): void {
  shownKey = '';
  gaveAccess = null;
  hasAgents = null;
  byId('grants', HTMLElement).replaceChildren();
  renderEmpty();
}
