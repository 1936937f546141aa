// The parts of a request card for an agent approval (kind `agent_approval`, decisions §19): the
// action an agent wants to take on any site, what it says about it (label, amount, page, hosts) and
// the category the service read from it. Text an agent wrote is shown as text, never as markup.
import { el } from '../dom.ts';
import type { AgentApprovalDetails, PendingRequest } from '../types.ts';
import { boundDetailsBlock } from './bound-details.ts';

const CATEGORY_TEXT: Record<string, string> = {
  money: 'Money: pays, buys, orders or subscribes',
  security: 'Security: passwords, email, access or billing',
  delete: 'Deletes something',
  publish: 'Publishes or sends something',
  low: 'Low risk: easily undone',
  unknown: 'Unknown: read it carefully',
};

export const isAgentApproval = (p: PendingRequest): boolean => p.kind === 'agent_approval';

export const AGENT_APPROVAL_LABEL = 'Approve an action';

export function agentApprovalHeading(p: PendingRequest): HTMLHeadingElement {
  return el('h3', {}, el('strong', { text: p.agent }), ' asks before acting on ', el('span', { className: 'site', text: p.site }));
}

function row(name: string, value: string | undefined): HTMLElement | null {
  return value === undefined || value === '' ? null : el('div', { className: 'detail-row' }, el('dt', { text: name }), el('dd', { text: value }));
}

export function agentApprovalBody(p: PendingRequest): (HTMLElement | null)[] {
  const d: AgentApprovalDetails = p.details ?? {};
  const category = p.category ?? 'unknown';
  const otherTarget = d.target_host !== undefined && d.target_host !== (d.host ?? p.site);
  const rows = [
    row('Action', p.action),
    row('Button', d.label),
    row('Amount', d.amount),
    row('Item', d.item),
    row('Page', d.page),
    row('Host', d.host),
    row('Sends to', d.target_host),
    row('Path', d.path),
    row('Form', [d.card_fields ? 'card fields' : '', d.password_fields ? 'password fields' : ''].filter(Boolean).join(', ') || undefined),
  ].filter((x): x is HTMLElement => x !== null);
  return [
    el('p', { className: `category ${category}`, text: CATEGORY_TEXT[category] ?? category }),
    el('dl', { className: 'agent-approval-details' }, ...rows),
    boundDetailsBlock(p),
    ...(otherTarget ? [el('p', { className: 'notice warn', text: `The form sends to another site: ${d.target_host ?? ''}.` })] : []),
    el('p', { className: 'hint', text: 'Approve only if this is what you want done.' }),
  ];
}

export function agentApprovalOutcome(p: PendingRequest, approved: boolean): string {
  const what = p.details?.label ?? p.action ?? 'the action';
  return approved ? `Approved: ${p.agent} may "${what}" on ${p.site}.` : `Denied: ${p.agent} may not "${what}" on ${p.site}.`;
}
