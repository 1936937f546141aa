// "Connections", under Agents (decisions §17): the operators the owner connected, companies that
// run agents for them. Shown once there is one; ended connections wait behind "Show ended" in a
// list of their own (nothing can be done with them, and toggling it leaves the live cards, with a
// confirm step or an error on them, as they are). One card per connection (connection-card.ts).
import { api } from '../api.ts';
import { byId } from '../dom.ts';
import type { Connection } from '../types.ts';
import { connectionCard, isEnded } from './connection-card.ts';

let showEnded = false;

const section = (): HTMLElement => byId('connections-section', HTMLElement);
const live = (): HTMLElement => byId('connections', HTMLElement);
const endedList = (): HTMLElement => byId('connections-ended', HTMLElement);
const toggle = (): HTMLButtonElement => byId('connections-show-ended', HTMLButtonElement);

/** A confirm step or a limit being typed must not be wiped by a refresh. */
function interacting(): boolean {
  const root = live();
  if (root.querySelector('.confirming')) return true;
  const typing = root.ownerDocument.activeElement;
  return typing instanceof HTMLInputElement && root.contains(typing) && typing.value !== typing.defaultValue;
}

function showToggle(ended: number): void {
  const button = toggle();
  button.hidden = ended === 0;
  button.textContent = showEnded ? 'Hide ended connections' : `Show ended connections (${ended})`;
  button.setAttribute('aria-expanded', String(showEnded));
  endedList().hidden = !showEnded || ended === 0;
}

export async function loadConnections(): Promise<void> {
  const connections = await api<Connection[]>('GET', '/api/connections');
  const ended = connections.filter(isEnded);
  const current = connections.filter((c) => !isEnded(c));
  section().hidden = connections.length === 0;
  byId('connections-empty', HTMLElement).hidden = current.length > 0;
  endedList().replaceChildren(...ended.map(connectionCard));
  showToggle(ended.length);
  if (!interacting()) live().replaceChildren(...current.map(connectionCard));
}

export function setUpConnections(): void {
  toggle().addEventListener('click', () => {
    showEnded = !showEnded;
    showToggle(endedList().childElementCount);
  });
}

export function resetConnections(): void {
  showEnded = false;
  live().replaceChildren();
  endedList().replaceChildren();
  section().hidden = true;
}

/** Brings a connection's card into view (an operator-made agent's card links to it). */
export function showConnection(connectionId: string): void {
  const card = live().querySelector<HTMLElement>(`article[data-connection="${CSS.escape(connectionId)}"]`);
  if (!card) return;
  card.scrollIntoView({ behavior: 'smooth', block: 'start' });
  card.focus({ preventScroll: true });
}
