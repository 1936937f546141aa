// "Connections", under Agents (decisions §17): the operators the owner connected, companies that
// run agents for them. Shown once there is one; ended connections wait behind "Show ended", since
// nothing can be done with them. One card per connection (connection-card.ts).
import { api } from '../api.ts';
import { byId } from '../dom.ts';
import type { Connection } from '../types.ts';
import { connectionCard, isEnded } from './connection-card.ts';

let showEnded = false;
let last: Connection[] = [];

const section = (): HTMLElement => byId('connections-section', HTMLElement);
const list = (): HTMLElement => byId('connections', HTMLElement);
const toggle = (): HTMLButtonElement => byId('connections-show-ended', HTMLButtonElement);

/** A confirm step or a limit being typed must not be wiped by a refresh. */
function interacting(): boolean {
  const root = list();
  if (root.querySelector('.confirming')) return true;
  const typing = root.ownerDocument.activeElement;
  return typing instanceof HTMLInputElement && root.contains(typing) && typing.value !== typing.defaultValue;
}

function render(): void {
  const ended = last.filter(isEnded).length;
  const live = last.length - ended;
  section().hidden = last.length === 0;
  byId('connections-empty', HTMLElement).hidden = live > 0;
  const button = toggle();
  button.hidden = ended === 0;
  button.textContent = showEnded ? 'Hide ended connections' : `Show ended connections (${ended})`;
  button.setAttribute('aria-expanded', String(showEnded));
  list().replaceChildren(...last.filter((c) => showEnded || !isEnded(c)).map(connectionCard));
}

export async function loadConnections(): Promise<void> {
  const connections = await api<Connection[]>('GET', '/api/connections');
  // Live ones first (as listed), then ended ones.
  last = [...connections.filter((c) => !isEnded(c)), ...connections.filter(isEnded)];
  if (interacting()) return;
  render();
}

export function setUpConnections(): void {
  toggle().addEventListener('click', () => {
    showEnded = !showEnded;
    render();
  });
}

export function resetConnections(): void {
  last = [];
  showEnded = false;
  list().replaceChildren();
  section().hidden = true;
}

/** Brings a connection's card into view (an operator-made agent's card links to it). */
export function showConnection(connectionId: string): void {
  const card = list().querySelector<HTMLElement>(`article[data-connection="${CSS.escape(connectionId)}"]`);
  if (!card) return;
  card.scrollIntoView({ behavior: 'smooth', block: 'start' });
  card.focus({ preventScroll: true });
}
