// One operator connection (decisions §17): who the operator is, its agents and their state, the
// agent limit the owner sets (0 to 50), and Disconnect after a confirm step that says what it does.
// An ended connection is shown as ended, without controls: connecting again makes a new one.
import { api, seg, userError } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { REFUSED_WHEN, day, plural } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Connection, ConnectionAgent } from '../types.ts';

export const LIMIT_MAX = 50;

const CONNECTION_STATE: Record<string, string> = { active: 'Connected', removed: 'Ended', blocked: 'Operator switched off', suspended: 'Suspended' };

const AGENT_STATE: Record<string, string> = {
  active: 'Active',
  removed: 'Removed',
  blocked: 'Blocked: its operator is switched off',
  suspended: 'Suspended: over the limit',
};

export const isEnded = (c: Connection): boolean => c.status === 'removed';

/** The limit typed by the owner, or a readable refusal (the form is `novalidate`: the card says why). */
function limitOf(input: HTMLInputElement): number {
  const text = input.value.trim();
  const n = Number(text);
  if (!/^\d{1,2}$/.test(text) || n > LIMIT_MAX) throw userError(`The agent limit is a whole number from 0 to ${LIMIT_MAX}.`);
  return n;
}

function agentLine(a: ConnectionAgent): HTMLElement {
  return el('li', { className: `connection-agent state-${a.status}`, 'data-agent': a.id },
    el('span', { className: 'connection-agent-name', text: a.name }),
    el('span', { className: `agent-state ${a.status}`, text: AGENT_STATE[a.status] ?? a.status }));
}

/** "2 agents of at most 5", and how many of them are held back by the limit. */
function countText(c: Connection): string {
  const live = c.agents.filter((a) => a.status !== 'removed');
  const suspended = live.filter((a) => a.status === 'suspended').length;
  const base = `${plural(live.length, 'agent')} of at most ${c.max_agents}`;
  return suspended ? `${base}; ${suspended} suspended until you raise the limit` : base;
}

function limitForm(c: Connection, errorNode: HTMLElement): HTMLFormElement {
  const name = c.operator.name;
  const input = el('input', {
    type: 'number', id: `limit-${c.id}`, className: 'limit-input', name: 'max_agents', min: 0, max: LIMIT_MAX, step: 1, inputmode: 'numeric',
    value: String(c.max_agents), 'aria-describedby': `limit-hint-${c.id}`,
  });
  const save = el('button', { type: 'submit', className: 'secondary limit-save', text: 'Save limit', 'aria-label': `Save the agent limit for ${name}` });
  const form = el('form', { className: 'connection-limit', novalidate: true },
    el('label', { for: input.id }, 'Agent limit ', el('small', { text: `(0 to ${LIMIT_MAX})` })),
    el('div', { className: 'row limit-row' }, input, save),
    el('p', { className: 'hint', id: `limit-hint-${c.id}`, text: `How many agents ${name} may have for you. Below the number it has, the newest beyond the limit are suspended: sites refuse them until you raise it again.` }));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void run(save, 'Saving…', async () => {
      const max = limitOf(input);
      const updated = await api<Connection>('POST', `/api/connections/${seg(c.id)}/limit`, { max_agents: max });
      // Saved: the field no longer counts as being typed in, so the refresh below redraws the card.
      input.value = input.defaultValue = String(updated.max_agents);
      const held = updated.agents.filter((a) => a.status === 'suspended').length;
      show(`${name} may now have up to ${plural(updated.max_agents, 'agent')}.${held ? ` ${plural(held, 'agent is', 'agents are')} suspended until you raise it.` : ''}`, 'ok');
      await reload('connections', 'agents');
    }, { errorNode, also: [input] });
  });
  return form;
}

/** What Disconnect does, said before it is done. */
function disconnectQuestion(c: Connection): string {
  const live = c.agents.filter((a) => a.status !== 'removed');
  const agents = live.length
    ? `Its ${plural(live.length, 'agent')} (${live.map((a) => a.name).join(', ')}) ${live.length === 1 ? 'is' : 'are'} removed and signed out of every site: ${live.length === 1 ? REFUSED_WHEN : REFUSED_WHEN.replace('refuse it', 'refuse them')}.`
    : 'It has no agents for you now.';
  return `Disconnect ${c.operator.name}? ${agents} It can no longer add agents for you; to use it again, connect anew from its site.`;
}

export function connectionCard(c: Connection): HTMLElement {
  const name = c.operator.name;
  const ended = isEnded(c);
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const agents = c.agents.length
    ? el('ul', { className: 'connection-agents' }, ...c.agents.map(agentLine))
    : el('p', { className: 'hint connection-no-agents', text: ended ? 'It had no agents for you.' : `No agents yet: ${name} may add up to ${plural(c.max_agents, 'agent')} for you.` });
  const card = el('article', { className: `card connection status-${c.status}`, 'data-connection': c.id, tabindex: -1, 'aria-label': `${name}, ${ended ? 'ended' : 'connected'}` },
    el('div', { className: 'card-top' }, el('h3', { text: name }), el('span', { className: `flag connection-status ${c.status}`, text: CONNECTION_STATE[c.status] ?? c.status })),
    el('p', { className: 'meta' }, el('span', { className: 'connection-domain', text: c.operator.domain }), ` · connected ${day(c.created_at)}`),
    el('p', { className: 'connection-count', text: ended ? 'Ended: its agents were removed.' : countText(c) }),
    agents);
  if (ended) return card;

  const disconnect = button('Disconnect', 'danger disconnect', { 'aria-label': `Disconnect ${name}` });
  const actions = el('div', { className: 'row actions' }, disconnect);
  disconnect.addEventListener('click', async () => {
    if (!(await confirmInline(actions, disconnectQuestion(c), 'Disconnect'))) return;
    await run(disconnect, 'Disconnecting…', async () => {
      await api('POST', `/api/connections/${seg(c.id)}/disconnect`);
      show(`${name} is disconnected: its agents are removed and signed out of every site.`, 'ok');
      await reload('connections', 'agents', 'me', 'activity');
    }, { errorNode });
  });
  card.append(limitForm(c, errorNode), errorNode, actions);
  return card;
}
