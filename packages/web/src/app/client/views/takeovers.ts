// Take-overs in the Activity view (decisions §21): the open ones, each a link to its page
// (/app/takeover/{id}), and the problems the owner's agents reported (POST /api/v1/takeover/report).
import { api } from '../api.ts';
import { byId, el } from '../dom.ts';
import { when } from '../format.ts';

interface ActiveTakeover { id: string; agent_id: string; url: string; reason: string; expires_at: string }
interface TakeoverReport { id: string; agent_id: string; site: string; kind: string; detail: string | null; created_at: string }

export async function loadTakeovers(): Promise<void> {
  const [active, reports] = await Promise.all([
    api<ActiveTakeover[]>('GET', '/api/takeover/active'),
    api<TakeoverReport[]>('GET', '/api/v1/takeover/reports'),
  ]);
  const list = byId('takeovers-active', HTMLUListElement);
  list.replaceChildren(...active.map((t) => el('li', {},
    el('a', { href: `/app/takeover/${encodeURIComponent(t.id)}`, text: `Take over: ${t.reason || t.url}` }),
    el('span', { className: 'muted', text: ` · ${t.url} · until ${when(t.expires_at)}` }),
  )));
  byId('takeovers-none', HTMLElement).hidden = active.length > 0;
  const rep = byId('takeover-reports', HTMLUListElement);
  rep.replaceChildren(...reports.slice(0, 20).map((r) => el('li', {},
    el('strong', { text: `${r.site}: ${r.kind.replaceAll('_', ' ')}` }),
    el('span', { className: 'muted', text: ` · ${r.agent_id} · ${when(r.created_at)}` }),
    r.detail ? el('div', { text: r.detail }) : null,
  )));
  byId('takeover-reports-section', HTMLElement).hidden = reports.length === 0;
}

export function resetTakeovers(): void {
  byId('takeovers-active', HTMLUListElement).replaceChildren();
  byId('takeover-reports', HTMLUListElement).replaceChildren();
}
