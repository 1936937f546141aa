// "Activity": the audit trail, newest first, with filters (agent, site, action) and "Older" paging.
// While shown, the newest page is fetched again at each refresh and merged on top.
import { api } from '../api.ts';
import { run } from '../actions.ts';
import { byId, el } from '../dom.ts';
import { when } from '../format.ts';
import type { ActivityItem, ActivityPage, Agent } from '../types.ts';
import { ACTION_FILTERS, activityText } from './activity-text.ts';

const PAGE = 20;

let items: ActivityItem[] = [];
let nextBefore: number | null = null;
/** The filter the shown items were loaded with; a change starts over. */
let shownFilter = '';
let hasAgents = true;

function filterQuery(): string {
  const q = new URLSearchParams();
  const agent = byId('activity-agent', HTMLSelectElement).value;
  const site = byId('activity-site', HTMLInputElement).value.trim();
  const action = byId('activity-action', HTMLSelectElement).value;
  if (agent) q.set('agent', agent);
  if (site) q.set('site', site);
  if (action) q.set('action', action);
  return q.toString();
}

const pagePath = (filter: string, before?: number) =>
  `/api/activity?limit=${PAGE}${before ? `&before=${before}` : ''}${filter ? `&${filter}` : ''}`;

function render(): void {
  const list = byId('activity', HTMLElement);
  list.replaceChildren(...items.map((a) => {
    const [title, extra] = activityText(a);
    return el('li', { 'data-action': a.action, 'data-seq': String(a.seq) },
      el('strong', { text: title }),
      el('span', { className: 'meta', text: [extra, when(a.created_at)].filter(Boolean).join(' · ') }));
  }));
  const filtered = shownFilter !== '';
  const empty = byId('activity-empty', HTMLElement);
  empty.hidden = items.length > 0;
  empty.textContent = filtered
    ? 'Nothing matches these filters. Clear them to see everything.'
    : hasAgents ? 'Nothing has happened yet. What your agents ask and what you answer shows here.' : 'Nothing has happened yet. Add an agent to begin.';
  byId('activity-more', HTMLButtonElement).hidden = nextBefore === null;
}

/** The newest page: merged on top of what is shown, or replacing it (new filter, or a gap could open). */
export async function loadActivity(): Promise<void> {
  const filter = filterQuery();
  const page = await api<ActivityPage>('GET', pagePath(filter));
  if (filter !== filterQuery()) return; // the filter changed while this was loading
  const top = items[0]?.seq;
  if (filter !== shownFilter || top === undefined || (page.next_before !== null && page.items.every((a) => a.seq > top))) {
    items = page.items;
    nextBefore = page.next_before;
    shownFilter = filter;
  } else {
    const newer = page.items.filter((a) => a.seq > top);
    if (!newer.length) return;
    items = newer.concat(items);
  }
  render();
}

async function loadOlder(): Promise<void> {
  if (nextBefore === null) return;
  const page = await api<ActivityPage>('GET', pagePath(shownFilter, nextBefore));
  const last = items[items.length - 1]?.seq ?? Infinity;
  items = items.concat(page.items.filter((a) => a.seq < last));
  nextBefore = page.next_before;
  render();
}

/** Told whether the owner has agents: the empty Activity then says what to do first. */
export function setActivityHasAgents(has: boolean): void {
  if (has === hasAgents) return;
  hasAgents = has;
  if (byId('activity-empty', HTMLElement).textContent) render();
}

/** The agent filter lists the owner's agents (removed ones are still found by their records). */
export function setAgentChoices(agents: Agent[]): void {
  const select = byId('activity-agent', HTMLSelectElement);
  const chosen = select.value;
  select.replaceChildren(el('option', { value: '', text: 'Any agent' }), ...agents.map((a) => el('option', { value: a.id, text: a.name })));
  if (chosen && !agents.some((a) => a.id === chosen)) select.append(el('option', { value: chosen, text: chosen }));
  select.value = chosen;
}

/** Sites the owner has dealt with, offered as suggestions in the site filter. */
export function setSiteSuggestions(sites: Iterable<string>): void {
  const list = byId('activity-sites', HTMLDataListElement);
  const all = new Set([...sites, ...items.map((a) => a.site).filter((s): s is string => Boolean(s))]);
  list.replaceChildren(...[...all].sort().map((s) => el('option', { value: s })));
}

export function setUpActivity(): void {
  const actionSelect = byId('activity-action', HTMLSelectElement);
  actionSelect.replaceChildren(el('option', { value: '', text: 'Any action' }), ...ACTION_FILTERS.map(([value, text]) => el('option', { value, text })));
  const form = byId('activity-filters', HTMLFormElement);
  const apply = byId('activity-apply', HTMLButtonElement);
  const refresh = () => void run(apply, 'Loading…', loadActivity);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    refresh();
  });
  for (const id of ['activity-agent', 'activity-action']) byId(id, HTMLSelectElement).addEventListener('change', refresh);
  byId('activity-clear', HTMLButtonElement).addEventListener('click', () => {
    form.reset();
    refresh();
  });
  const more = byId('activity-more', HTMLButtonElement);
  more.addEventListener('click', () => void run(more, 'Loading…', loadOlder));
}

export function resetActivity(): void {
  items = [];
  nextBefore = null;
  shownFilter = '';
  byId('activity-filters', HTMLFormElement).reset();
  byId('activity', HTMLElement).replaceChildren();
}
