// "Agents": the owner's agents as cards (the form that adds one is agent-form.ts).
import { api } from '../api.ts';
import { byId } from '../dom.ts';
import type { Agent } from '../types.ts';
import { agentCard } from './agent-card.ts';

/** Told of every agent list loaded (the activity filter lists the agents). */
const listeners: ((agents: Agent[]) => void)[] = [];

export const onAgentsLoaded = (fn: (agents: Agent[]) => void): void => void listeners.push(fn);

/** A confirm step the owner is looking at must not be wiped by a refresh. */
const interacting = (): boolean => Boolean(byId('agents', HTMLElement).querySelector('.confirming'));

export async function loadAgents(): Promise<void> {
  const agents = await api<Agent[]>('GET', '/api/agents');
  for (const fn of listeners) fn(agents);
  if (interacting()) return;
  byId('agents-empty', HTMLElement).hidden = agents.length > 0;
  byId('agents', HTMLElement).replaceChildren(...agents.map(agentCard));
}

export function resetAgents(): void {
  byId('agents', HTMLElement).replaceChildren();
}
