// What an agent's card says about the operator that made it (decisions §17): "via <operator>", a
// link to its connection, and why a suspended or blocked agent does not work (and what brings it
// back). Agents the owner added have none of this.
import { button, el } from '../dom.ts';
import type { Agent } from '../types.ts';
import { showConnection } from './connections.ts';

/** The "via Acme agents" mark for the card's top line, or null for an agent the owner added. */
export function viaMark(a: Agent): HTMLElement | null {
  if (!a.operator) return null;
  return el('span', { className: 'via', title: 'Made by an operator you connected', text: `via ${a.operator.name}` });
}

/** The `dt`/`dd` pair naming the operator, with a link to its connection under Connections. */
export function operatorFacts(a: Agent): HTMLElement[] {
  const op = a.operator;
  if (!op) return [];
  const open = button('See the connection', 'link see-connection', { 'aria-label': `See the connection to ${op.name}` });
  open.addEventListener('click', () => showConnection(op.connection_id));
  return [
    el('dt', { text: 'Made by' }),
    el('dd', { className: 'agent-operator' }, `${op.name}, an operator you connected. `, open),
  ];
}

/** Why the agent is stopped, when it is: shown above its facts, or null when it works. */
export function stateNotice(a: Agent): HTMLElement | null {
  const by = a.operator?.name ?? 'its operator';
  if (a.status === 'suspended') {
    return el('p', { className: 'notice agent-suspended', role: 'note' },
      el('strong', { text: 'Suspended. ' }),
      `You lowered the agent limit for ${by} below the number of agents it has, and this is one of the newest beyond it. Sites refuse it until you raise the limit under Connections below.`);
  }
  if (a.status === 'blocked') {
    return el('p', { className: 'notice agent-blocked', role: 'note' },
      el('strong', { text: 'Blocked. ' }),
      `An admin switched ${by} off, so sites refuse its agents. It works again if the operator is switched back on.`);
  }
  return null;
}

/** The badge at the top of the card: a stopped agent's state wins over its flag at sites. */
export const STATE_BADGE: Partial<Record<Agent['status'], string>> = { suspended: 'Suspended', blocked: 'Blocked' };
