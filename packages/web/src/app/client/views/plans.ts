// Plans (decisions §20), under Agents: each plan with its agent, window, status and steps (what is
// pre-approved, how many uses are left, what happened), newest first; a pending or approved plan can
// be withdrawn, after which none of its steps goes ahead without asking.
import { api, seg } from '../api.ts';
import { report } from '../actions.ts';
import { button, byId, el } from '../dom.ts';
import type { Plan, PlanStep } from './plan-types.ts';

const at = (unix: number): string => new Date(unix * 1000).toLocaleString();

const STATUS_TEXT: Record<string, string> = {
  pending: 'Waiting for your answer',
  approved: 'Approved',
  denied: 'Denied',
  withdrawn: 'Withdrawn',
  expired: 'Not answered in time',
};

function stepLine(s: PlanStep): HTMLElement {
  const cover = s.approved ? `pre-approved, ${s.uses_left} use${s.uses_left === 1 ? '' : 's'} left` : s.pre_approvable ? 'asks you' : 'always asks';
  return el('li', { className: `plan-step ${s.state}` }, el('strong', { text: s.button }), ` · ${cover} · ${s.state}${s.reason ? ` (${s.reason})` : ''}`);
}

function planCard(p: Plan, names: Map<string, string>): HTMLElement {
  const error = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const card = el('article', { className: `card plan ${p.status}`, 'data-plan': p.plan_id, 'aria-label': `Plan ${p.title}` },
    el('div', { className: 'card-top' }, el('span', { className: `kind plan ${p.status}`, text: STATUS_TEXT[p.status] ?? p.status })),
    el('h3', { text: p.title }),
    el('p', { className: 'meta', text: `${names.get(p.agent_id) ?? p.agent_id} · ${at(p.start_at)} to ${at(p.end_at)}` }),
    el('ul', { className: 'plan-steps' }, ...p.steps.map(stepLine)),
    error);
  if (p.status === 'pending' || p.status === 'approved') {
    const withdraw = button('Withdraw', 'secondary withdraw');
    withdraw.addEventListener('click', () => {
      withdraw.disabled = true;
      api('POST', `/api/plans/${seg(p.plan_id)}/withdraw`)
        .then(() => loadPlans())
        .catch(async (e: unknown) => {
          withdraw.disabled = false;
          await report(e, error);
        });
    });
    card.append(el('div', { className: 'row actions' }, withdraw));
  }
  return card;
}

/** GET /api/plans (all agents), with the agents' names from GET /api/agents. */
export async function loadPlans(): Promise<void> {
  const [plans, agents] = await Promise.all([api<Plan[]>('GET', '/api/plans'), api<{ id: string; name: string }[]>('GET', '/api/agents')]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  byId('plans', HTMLElement).replaceChildren(...plans.map((p) => planCard(p, names)));
  byId('plans-empty', HTMLElement).hidden = plans.length > 0;
}

export function resetPlans(): void {
  byId('plans', HTMLElement).replaceChildren();
  byId('plans-empty', HTMLElement).hidden = true;
}
