// The body of a plan card (a request of kind `plan`, decisions §20): the plan's window and steps,
// each with a tick box; money and security steps are shown but cannot be ticked (they always ask).
// The owner approves the ticked steps with the passkey (approval-card.ts sends `steps`).
import { api } from '../api.ts';
import { el } from '../dom.ts';
import type { PendingRequest } from '../types.ts';
import type { Plan, PlanStep } from './plan-types.ts';

const at = (unix: number): string => new Date(unix * 1000).toLocaleString();

function stepRow(step: PlanStep): HTMLElement {
  // No tick box at all for a step that always asks: the card's busy state re-enables its controls,
  // so a disabled box could become tickable after a failed approval.
  const box = step.pre_approvable ? el('input', { type: 'checkbox', name: 'plan-step', value: step.id, checked: true }) : el('span', { className: 'always-asks-mark', text: '🔒', 'aria-label': 'always asks' });
  const host = (() => {
    try {
      return new URL(step.url).host;
    } catch {
      return step.url;
    }
  })();
  return el('li', { className: `plan-step${step.pre_approvable ? '' : ' always-asks'}` },
    el('label', {}, box, ' ', el('strong', { text: step.button }), ' ', el('span', { className: 'site', text: `at ${host}` })),
    step.pre_approvable ? '' : el('p', { className: 'hint', text: 'Always asks: payments and security changes are never pre-approved.' }));
}

/** The plan of this card, fetched by its agent (GET /api/plans?agent_id=), or undefined once gone. */
async function planOfCard(p: PendingRequest): Promise<Plan | undefined> {
  const plans = await api<Plan[]>('GET', `/api/plans?agent_id=${encodeURIComponent(p.agent_id)}`);
  return plans.find((plan) => plan.txn_id === p.id);
}

/** The card body: title, window and the steps to tick; filled in once the plan is fetched. */
export function planChoices(p: PendingRequest): HTMLElement[] {
  const list = el('ul', { className: 'plan-steps', 'aria-label': 'Steps to pre-approve' });
  const window = el('p', { className: 'hint', text: 'Loading the plan…' });
  planOfCard(p).then((plan) => {
    if (!plan) {
      window.textContent = 'This plan is no longer there.';
      return;
    }
    window.textContent = `Runs unattended between ${at(plan.start_at)} and ${at(plan.end_at)}. Ticked steps then go ahead without asking you; the others ask as usual.`;
    list.replaceChildren(...plan.steps.map(stepRow));
  }).catch(() => {
    window.textContent = 'The plan could not be loaded. Deny it, or reload to try again.';
  });
  return [el('blockquote', { className: 'action', text: p.action ?? '' }), window, list];
}

/** The ticked steps of a plan card (money and security steps are never among them). */
export function readPlanSteps(node: HTMLElement): { steps: string[] } {
  return { steps: [...node.querySelectorAll<HTMLInputElement>('input[name="plan-step"]')].filter((b) => b.checked).map((b) => b.value) };
}
