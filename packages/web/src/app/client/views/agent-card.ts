// One agent: its flag, what sites see of it (status, revoked sites), its reputation and its own
// status reports; block or unblock it, or delete it after a confirm step.
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { REFUSED_WHEN, capital, day, plural, when } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { approvalModesSection } from './approval-modes.ts';
import { passwordManagerFacts } from './password-manager.ts';
import { STATE_BADGE, operatorFacts, stateNotice, viaMark } from './agent-operator.ts';
import type { Agent, AgentStatus, ReportedStatus, Reputation } from '../types.ts';

const FLAG_LABELS: Record<string, string> = { ok: 'Active', suspicious: 'Suspicious', revoked: 'Revoked' };

/** Copies text, and says so on the button for a moment. */
export function copyButton(text: string, what: string): HTMLButtonElement {
  const b = button('Copy', 'link copy', { 'aria-label': `Copy ${what}` });
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Select and copy it';
    }
    setTimeout(() => (b.textContent = 'Copy'), 2000);
  });
  return b;
}

function reportsText(r: Reputation): string {
  if (!r.reporting_sites) return 'no site has reported on it yet';
  const kinds = Object.entries(r.reports).filter(([, n]) => n > 0).map(([kind, n]) => `${kind} ${n}`);
  return `${plural(r.reporting_sites, 'site')} reported: ${kinds.join(', ')}`;
}

/** A revoked agent scores 0 whatever sites reported: say why, rather than "no reports". */
const REVOKED_REPUTATION = 'it is 0 because you revoked this agent';

function statusText(s: AgentStatus): string {
  if (s.global_flag === 'revoked') return 'Blocked everywhere: every site refuses its passes.';
  const revoked = s.revoked_sites.length ? ` Revoked at ${s.revoked_sites.join(', ')}.` : '';
  return `${s.global_flag === 'suspicious' ? 'Marked suspicious.' : 'In good standing.'}${revoked}`;
}

/** Fills the card's details from the public status and reputation and the owner-only status reports. */
async function loadDetails(a: Agent, into: { status: HTMLElement; reputation: HTMLElement; reported: HTMLElement }): Promise<void> {
  const [status, reputation, reported] = await Promise.allSettled([
    api<AgentStatus>('GET', `/api/v1/agents/${seg(a.id)}/status`),
    api<Reputation>('GET', `/api/v1/agents/${seg(a.id)}/reputation`),
    api<ReportedStatus[]>('GET', `/api/agents/${seg(a.id)}/statuses`),
  ]);
  into.status.textContent = status.status === 'fulfilled' ? statusText(status.value) : 'Could not load; it is retried when you come back here.';
  into.reputation.textContent = reputation.status === 'fulfilled'
    ? `${reputation.value.score} / 100 · ${a.flag === 'revoked' ? REVOKED_REPUTATION : reportsText(reputation.value)}`
    : 'Could not load; it is retried when you come back here.';
  if (reported.status === 'fulfilled') {
    const latest = reported.value[0];
    into.reported.textContent = latest ? `"${latest.status}"${latest.site ? ` at ${latest.site}` : ''} · ${when(latest.reported_at)}` : 'Nothing reported yet.';
  } else {
    into.reported.textContent = 'Could not load.';
  }
}

export function agentCard(a: Agent): HTMLElement {
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const status = el('dd', { className: 'agent-status', text: 'Loading…' });
  const reputation = el('dd', { className: 'agent-reputation', text: 'Loading…' });
  const reported = el('dd', { className: 'agent-reported', text: 'Loading…' });
  const blocked = a.flag === 'revoked';
  const toggle = blocked
    ? button('Unblock', 'secondary unblock', { 'aria-label': `Unblock ${a.name}` })
    : button('Revoke', 'danger revoke-agent', { 'aria-label': `Revoke ${a.name}` });
  const remove = button('Delete', 'danger delete-agent', { 'aria-label': `Delete ${a.name}` });
  const actions = el('div', { className: 'row actions' }, toggle, remove);

  toggle.addEventListener('click', async () => {
    if (!blocked && !(await confirmInline(actions, `Revoke ${a.name}? ${capital(REFUSED_WHEN)}. Its access to every site ends and its open requests are cancelled. Unblocking it later does not bring that access back.`, 'Revoke'))) return;
    await run(toggle, blocked ? 'Unblocking…' : 'Revoking…', async () => {
      await api('POST', `/api/agents/${seg(a.id)}/flag`, { flag: blocked ? 'ok' : 'revoked' });
      show(blocked ? `${a.name} is unblocked. It has to ask you again for access to each site.` : `${a.name} is revoked: ${REFUSED_WHEN}.`, 'ok');
      await reload('agents', 'me', 'activity');
    }, { errorNode });
  });

  remove.addEventListener('click', async () => {
    if (!(await confirmInline(actions, `Delete ${a.name}? Its access to every site ends (${REFUSED_WHEN}), its open requests are cancelled, and it can never ask again.`, 'Delete for good'))) return;
    await run(remove, 'Deleting…', async () => {
      await api('DELETE', `/api/agents/${seg(a.id)}`);
      show(`${a.name} is deleted: ${REFUSED_WHEN}.`, 'ok');
      await reload('agents', 'me', 'activity');
    }, { errorNode });
  });

  void loadDetails(a, { status, reputation, reported });

  const stopped = STATE_BADGE[a.status];
  const badge = stopped
    ? el('span', { className: `flag state ${a.status}`, text: stopped })
    : el('span', { className: `flag ${a.flag}`, text: FLAG_LABELS[a.flag] ?? a.flag });
  return el('article', { className: `card agent flag-${a.flag} status-${a.status}`, 'data-agent': a.id, 'aria-label': a.name },
    el('div', { className: 'card-top' }, el('div', { className: 'agent-title' }, el('h3', { text: a.name }), viaMark(a)), badge),
    stateNotice(a),
    el('p', { className: 'meta' }, 'Id ', el('span', { className: 'code agent-id', text: a.id }), ' ', copyButton(a.id, `the id of ${a.name}`)),
    el('dl', { className: 'facts' },
      ...operatorFacts(a),
      el('dt', { text: 'At sites' }), status,
      el('dt', { text: 'Reputation' }), reputation,
      el('dt', { text: 'Last status' }), reported,
      ...passwordManagerFacts(a, errorNode),
      el('dt', { text: 'Added' }), el('dd', { text: day(a.created_at) }),
      el('dt', { text: 'Key' }), el('dd', { className: 'code small', text: a.jkt, title: 'RFC 7638 thumbprint of its public key' })),
    approvalModesSection(a),
    errorNode,
    actions);
}
