// Approval modes on an agent's card (decisions §19): the default (ask or smart), one row per site
// (ask, smart or allow, with an hourly limit of automatic approvals), add and remove, and what a
// denial pauses. Loaded when the owner opens the section; every change answers the new modes.
import { api, seg } from '../api.ts';
import { run } from '../actions.ts';
import { button, el } from '../dom.ts';
import type { Agent } from '../types.ts';

interface ModeRow { mode: 'ask' | 'smart' | 'allow'; hourly_limit: number }
interface ModesView { default: ModeRow; sites: Record<string, ModeRow>; pause_scope: 'domain' | 'host' }

const MODE_TEXT: Record<string, string> = {
  ask: 'Ask me every time',
  smart: 'Smart: approve low-risk actions (save, next page, add to cart…)',
  allow: 'Allow: approve all but payments and security',
};

function select(name: string, options: string[], value: string, label: string, text: Record<string, string> = {}): HTMLSelectElement {
  const s = el('select', { name, 'aria-label': label });
  for (const o of options) s.append(el('option', { value: o, text: text[o] ?? o }));
  s.value = value;
  return s;
}

export function approvalModesSection(a: Agent): HTMLElement {
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const body = el('div', { className: 'modes-body' }, el('p', { className: 'hint', text: 'Loading…' }));
  const section = el('details', { className: 'approval-modes' }, el('summary', { text: 'Approval modes' }), body, errorNode);
  const path = `/api/agents/${seg(a.id)}/approval-modes`;

  const render = (v: ModesView): void => {
    const defaultMode = select('default-mode', ['ask', 'smart'], v.default.mode === 'allow' ? 'ask' : v.default.mode, `Default approval mode of ${a.name}`, MODE_TEXT);
    const pause = select('pause-scope', ['domain', 'host'], v.pause_scope, 'What a denial pauses', { domain: 'A denial pauses the whole domain for an hour', host: 'A denial pauses only that host for an hour' });
    const saveDefault = button('Save', 'secondary save-default');
    saveDefault.addEventListener('click', () => run(saveDefault, 'Saving…', async () => {
      render(await api<ModesView>('POST', path, { site: '*', mode: defaultMode.value, hourly_limit: v.default.hourly_limit, pause_scope: pause.value }));
    }, { errorNode }));

    const rows = Object.entries(v.sites).map(([site, r]) => {
      const remove = button('Remove', 'secondary remove-mode', { 'aria-label': `Remove the mode for ${site}` });
      remove.addEventListener('click', () => run(remove, 'Removing…', async () => {
        render(await api<ModesView>('POST', path, { site, mode: null }));
      }, { errorNode }));
      return el('li', { className: 'mode-row', 'data-site': site }, el('span', { className: 'site', text: site }), ' ', el('span', { className: 'mode', text: `${r.mode}, at most ${r.hourly_limit} an hour` }), ' ', remove);
    });

    const siteInput = el('input', { name: 'mode-site', type: 'text', placeholder: 'shop.example.com', 'aria-label': 'Site (host name)', autocomplete: 'off', inputMode: 'url' });
    const modeInput = select('mode', ['ask', 'smart', 'allow'], 'smart', 'Mode for the site', MODE_TEXT);
    const limitInput = el('input', { name: 'hourly-limit', type: 'number', min: '1', max: '200', value: '20', 'aria-label': 'Automatic approvals per hour' });
    const add = button('Add', 'secondary add-mode');
    add.addEventListener('click', () => run(add, 'Adding…', async () => {
      render(await api<ModesView>('POST', path, { site: siteInput.value.trim(), mode: modeInput.value, hourly_limit: Number(limitInput.value) }));
    }, { errorNode }));

    body.replaceChildren(
      el('p', { className: 'hint', text: 'How this agent\'s own approval requests are answered. Payments and security actions always ask unless a plan covers them.' }),
      el('div', { className: 'row' }, defaultMode, pause, saveDefault),
      el('ul', { className: 'mode-rows' }, ...rows),
      el('div', { className: 'row add-mode-row' }, siteInput, modeInput, limitInput, add),
    );
  };

  let loaded = false;
  section.addEventListener('toggle', () => {
    if (!section.open || loaded) return;
    loaded = true;
    api<ModesView>('GET', path).then(render, (e: unknown) => {
      loaded = false;
      errorNode.textContent = e instanceof Error ? e.message : 'Could not load the approval modes.';
      errorNode.hidden = false;
    });
  });
  return section;
}
