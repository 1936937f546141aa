// "Agents": the owner's agents as cards (the form that adds one is agent-form.ts), and apart from
// them the connected apps (decisions §28: keyless MCP clients approved in the browser), each with
// the resources it may act at (app-card.ts).
import { api } from '../api.ts';
import { byId } from '../dom.ts';
import type { Agent, Grant } from '../types.ts';
import { agentCard } from './agent-card.ts';
import { appCard } from './app-card.ts';

/** Told of every agent list loaded, apps included (the activity filter lists them all). */
const listeners: ((agents: Agent[]) => void)[] = [];

export const onAgentsLoaded = (fn: (agents: Agent[]) => void): void => void listeners.push(fn);

export const isApp = (a: Agent): boolean => a.kind === 'app';

/** A confirm step the owner is looking at must not be wiped by a refresh. */
const interacting = (): boolean => ['agents', 'apps'].some((id) => byId(id, HTMLElement).querySelector('.confirming'));

/** The most grants GET /api/grants answers in one page (the server's GRANTS_PAGE.max). */
const GRANTS_PAGE_LIMIT = 500;

/** Every live grant, page by page (a page shorter than the limit is the last). */
async function allGrants(): Promise<Grant[]> {
  const grants: Grant[] = [];
  for (;;) {
    const page = await api<Grant[]>('GET', `/api/grants?offset=${grants.length}&limit=${GRANTS_PAGE_LIMIT}`);
    grants.push(...page);
    if (page.length < GRANTS_PAGE_LIMIT) return grants;
  }
}

export async function loadAgents(): Promise<void> {
  const agents = await api<Agent[]>('GET', '/api/agents');
  const apps = agents.filter(isApp);
  const keyed = agents.filter((a) => !isApp(a));
  // Only an owner with apps pays for the grants: they are what an app's card lists.
  const grants = apps.length ? await allGrants() : [];
  for (const fn of listeners) fn(agents);
  if (interacting()) return;
  byId('agents-empty', HTMLElement).hidden = keyed.length > 0;
  byId('agents', HTMLElement).replaceChildren(...keyed.map(agentCard));
  byId('apps-section', HTMLElement).hidden = apps.length === 0;
  byId('apps', HTMLElement).replaceChildren(...apps.map((a) => appCard(a, grants.filter((g) => g.agent_id === a.id))));
}

export function resetAgents(): void {
  byId('agents', HTMLElement).replaceChildren();
  byId('apps', HTMLElement).replaceChildren();
  byId('apps-section', HTMLElement).hidden = true;
}
