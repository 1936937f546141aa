// One card per open request: who asks, for what, at which site, until when; approve with a passkey
// (after narrowing) or deny with one tap. The card keeps its state across refreshes.
import { ApiError, api, seg } from '../api.ts';
import { report } from '../actions.ts';
import { button, el } from '../dom.ts';
import { errorName, errorText } from '../errors.ts';
import { timeLeft, when } from '../format.ts';
import { reload } from '../loaders.ts';
import { type ApprovePlace, approvePlace } from '../device.ts';
import type { PendingRequest } from '../types.ts';
import { approvalAssertion, deviceFacts } from '../webauthn.ts';
import { verifyPrompt } from './email-link.ts';
import { providerApproveRow } from './identity-approve.ts';
import { AGENT_APPROVAL_LABEL, agentApprovalBody, agentApprovalHeading, agentApprovalOutcome, isAgentApproval } from './agent-approval-card.ts';
import { type Choices, choiceControls, readChoices } from './request-choices.ts';
import { planChoices, readPlanSteps } from './plan-card.ts';
import { boundDetailsBlock } from './bound-details.ts';
import { APP_CALL_LABEL, appCall, appCallAriaLabel, appCallBody, appCallHeading, appCallOutcome } from './app-call-card.ts';
import { signInBody, signInHeading, signInKindLabel, signInOutcome } from './sign-in-request.ts';

/** How long an answered card stays to show its outcome before it goes. */
const OUTCOME_MS = 6000;

export type CardState = 'open' | 'busy' | 'done';

export interface RequestCard {
  request: PendingRequest;
  node: HTMLElement;
  state: CardState;
  tick(): void;
  /** Shows the outcome instead of the controls; the card removes itself a little later. */
  finish(text: string, kind: 'ok' | 'denied' | 'gone'): void;
  /** Says, before Approve is pressed, where the approval can happen (device.ts `approvePlace`). */
  advise(place: ApprovePlace): void;
}

function heading(p: PendingRequest): HTMLHeadingElement {
  if (p.sign_in) return signInHeading(p, p.sign_in);
  const app = appCall(p);
  if (app) return appCallHeading(p, app);
  const agent = el('strong', { text: p.agent });
  const site = el('span', { className: 'site', text: p.site });
  // A site step-up (decisions §28): the site asks, for the agent that acts there.
  if (p.kind === 'stepup' && p.filed_by === 'site') return el('h3', {}, site, ' asks you to confirm an action for ', agent);
  if (p.kind === 'stepup') return el('h3', {}, agent, ' asks you to confirm an action at ', site);
  if (isAgentApproval(p)) return agentApprovalHeading(p);
  if (p.kind === 'initial') return el('h3', {}, agent, ' asks for access to ', site);
  if (p.kind === 'plan') return el('h3', {}, agent, ' asks you to pre-approve a plan, starting at ', site);
  return el('h3', {}, agent, ` asks (${p.kind}) at `, site);
}

function outcomeText(p: PendingRequest, status: string, choices: Choices | undefined): string {
  if (p.sign_in) return signInOutcome(p, p.sign_in, status === 'approved', choices);
  if (isAgentApproval(p)) return agentApprovalOutcome(p, status === 'approved');
  const app = appCall(p);
  if (app) return appCallOutcome(p, app, status === 'approved');
  // A refused step-up refuses that one action: the access the agent already has at the site stays.
  if (status !== 'approved' && p.kind === 'stepup') return `Denied: ${p.agent} may not "${p.action ?? ''}" at ${p.site}. Its access there stays; revoke it under Access if you want it gone.`;
  if (p.kind === 'plan') return status === 'approved' ? `Approved: the ticked steps of "${p.action ?? ''}" go ahead without asking, inside the plan's window.` : `Denied: nothing of "${p.action ?? ''}" is pre-approved.`;
  if (status !== 'approved') return `Denied. ${p.agent} gets nothing from ${p.site}.`;
  if (p.kind === 'stepup') return `Approved: ${p.agent} may "${p.action ?? ''}" at ${p.site}, once.`;
  const scopes = choices?.scopes ?? p.scopes;
  const info = choices?.user_info ?? p.user_info;
  return `Approved. ${p.agent} may ${scopes.join(', ')} at ${p.site}${info.length ? ` and see ${info.join(', ')}` : ''}.`;
}

/** The 409s that mean "nothing left to answer here" (rather than "add a passkey first"). */
const goneText = (e: ApiError): string =>
  /removed or revoked/i.test(e.detail) ? errorText(e) : 'Already answered on another device, or it expired.';

/** Why the passkey is likely not here: how the owner signed in, or what the device lacks. */
function elsewhereReason(): string {
  const facts = deviceFacts();
  if (facts.method === 'password') return 'You signed in here with your password, so this device may not hold your passkey.';
  return 'This device has no passkey of its own (no fingerprint, face or screen lock for passkeys).';
}

/** Where to approve instead, before Approve is pressed: on the phone that holds the passkey, and how to add this device. */
function elsewhereNotice(): { node: HTMLElement; reason: HTMLElement } {
  const reason = el('span', { className: 'reason' });
  const node = el('div', { className: 'notice elsewhere', hidden: true },
    el('p', {}, el('strong', { text: 'Approve on the phone that holds your passkey.' }), ' ', reason,
      ' Open Mandate there: this request waits for you. If your browser offers to use your phone, Approve works here too.'),
    el('p', {}, 'To approve on this device as well, ', el('a', { href: '#account', text: 'add it under Account' }), '.'));
  return { node, reason };
}

/**
 * A request that asks for the owner's email while it is unverified: the service shares only a
 * verified address (decisions §25), so the card says so where the choice is made, with the link to
 * send. It follows the state (email-state.ts): verifying elsewhere hides it without a reload.
 */
function emailNotice(p: PendingRequest): HTMLElement | null {
  if (!p.user_info.includes('user:email')) return null;
  return verifyPrompt('email-unverified-share',
    el('strong', { text: 'Your email address cannot be shared until you verify it.' }),
    ' Approved with it ticked, the site sees it only once you have opened the link Mandate mails you.');
}

const FAILED_ELSEWHERE = 'No passkey answered on this device. Approve on the phone that holds your passkey (this request waits there too), or add this device under Account.';
const UNSUPPORTED = 'This browser cannot use passkeys. Approve on the phone that holds your passkey; you can deny here.';

export function requestCard(p: PendingRequest, onGone: (card: RequestCard) => void): RequestCard {
  const time = el('span', { className: 'time' });
  const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const approve = button('Approve', 'approve');
  const deny = button('Deny', 'secondary deny');
  const actions = el('div', { className: 'row actions' }, approve, deny);
  const addPasskey = button('Add a passkey on this device', 'secondary');
  // The same ceremony as the "add a passkey" notice at the top of the view.
  addPasskey.addEventListener('click', () => document.getElementById('passkey-setup-button')?.click());
  const notice = el('div', { className: 'notice no-passkey', hidden: true },
    el('p', { text: 'Approving needs a passkey, and this account has none yet. Add one, then approve here. You can deny without one.' }),
    addPasskey);
  const elsewhere = elsewhereNotice();
  const unsupported = el('p', { className: 'notice unsupported', hidden: true, text: UNSUPPORTED });
  let place: ApprovePlace = 'here';
  const signIn = p.sign_in;
  const app = appCall(p);
  const kindLabel = signIn ? signInKindLabel(signIn) : app ? APP_CALL_LABEL : p.kind === 'stepup' ? 'Confirm an action' : p.kind === 'initial' ? 'Access request' : isAgentApproval(p) ? AGENT_APPROVAL_LABEL : p.kind === 'plan' ? 'Plan' : 'Request';
  const body: (HTMLElement | null)[] = signIn
    ? signInBody(p, signIn)
    : app
      ? appCallBody(p)
      : p.kind === 'stepup'
      ? [el('blockquote', { className: 'action', text: p.action ?? '' }), boundDetailsBlock(p), el('p', { className: 'hint', text: 'Approve only if this is exactly what you want done. It can be used once.' })]
      : p.kind === 'initial' ? choiceControls(p.scopes, p.user_info) : isAgentApproval(p) ? agentApprovalBody(p) : p.kind === 'plan' ? planChoices(p) : [];
  const ariaLabel = signIn ? `${kindLabel}: ${p.agent} to ${signIn.client_name} at ${p.site}` : app ? appCallAriaLabel(p, app) : `${kindLabel} from ${p.agent} at ${p.site}`;
  const node = el('article', { className: `card request ${p.kind}${signIn ? ` sign-in ${signIn.verified ? 'verified' : 'unverified'}` : ''}${app ? ' app-call' : ''}`, 'data-txn': p.id, 'aria-busy': 'false', 'aria-label': ariaLabel },
    el('div', { className: 'card-top' }, el('span', { className: `kind ${p.kind}${signIn ? ' sign-in' : ''}`, text: kindLabel }), time),
    heading(p),
    ...body,
    emailNotice(p),
    el('p', { className: 'meta', text: `${app ? `App ${app.client_id}` : `Agent ${p.agent_id}`} · asked ${when(p.created_at)}` }),
    notice,
    elsewhere.node,
    unsupported,
    errorNode,
    actions);
  // "Approve with <label>" for each linked identity provider, on access requests only (identity-approve.ts).
  const viaProvider = providerApproveRow(p, node, errorNode);
  if (viaProvider) node.append(viaProvider);

  const controls = () => [...node.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLButtonElement>('input, select, button')];

  const card: RequestCard = {
    request: p,
    node,
    state: 'open',
    tick() {
      if (card.state === 'done') return;
      const left = timeLeft(p.expires_at);
      time.textContent = left.text;
      time.classList.toggle('soon', left.soon);
      if (left.expired && card.state === 'open') card.finish('This request expired before you answered. The agent has to ask again.', 'gone');
    },
    finish(text, kind) {
      if (card.state === 'done') return;
      card.state = 'done';
      node.setAttribute('aria-busy', 'false');
      node.classList.add('done', kind);
      time.hidden = true;
      node.replaceChildren(node.children[0] ?? '', node.children[1] ?? '', el('p', { className: `outcome ${kind}`, role: 'status', text }));
      setTimeout(() => {
        node.remove();
        onGone(card);
      }, OUTCOME_MS);
    },
    advise(where) {
      place = where;
      notice.hidden = where !== 'no-passkey';
      elsewhere.node.hidden = where !== 'elsewhere';
      if (where === 'elsewhere') elsewhere.reason.textContent = elsewhereReason();
      unsupported.hidden = where !== 'unsupported';
    },
  };

  function setBusy(on: boolean): void {
    card.state = on ? 'busy' : 'open';
    node.setAttribute('aria-busy', String(on));
    for (const c of controls()) if (c !== addPasskey) c.disabled = on;
  }

  async function answer(yes: boolean, pressed: HTMLButtonElement): Promise<void> {
    if (card.state !== 'open') return;
    errorNode.hidden = true;
    let choices: Choices | undefined;
    const planSteps = yes && p.kind === 'plan' ? readPlanSteps(node) : {};
    try {
      if (yes && p.kind === 'initial') choices = readChoices(node, signIn ? p.scopes : undefined);
    } catch (e) {
      await report(e, errorNode);
      return;
    }
    const label = pressed.textContent ?? '';
    setBusy(true);
    pressed.textContent = yes ? 'Approving…' : 'Denying…';
    try {
      let assertion: unknown;
      if (yes) {
        assertion = await approvalAssertion(p.id, () => (pressed.textContent = 'Waiting for your passkey…'));
        pressed.textContent = 'Approving…';
      }
      const body = yes ? { approve: true, assertion, ...(choices ?? {}), ...planSteps } : { approve: false };
      const { status } = await api<{ status: string }>('POST', `/api/txn/${seg(p.id)}/response`, body);
      card.finish(outcomeText(p, status, choices), status === 'approved' ? 'ok' : 'denied');
      reload('me', 'activity').catch(() => undefined);
    } catch (e) {
      pressed.textContent = label;
      setBusy(false);
      if (e instanceof ApiError && e.status === 409 && !/no passkey/i.test(e.detail)) {
        card.finish(goneText(e), 'gone');
        return;
      }
      if (e instanceof ApiError && e.status === 404) {
        card.finish('This request no longer exists.', 'gone');
        return;
      }
      if (e instanceof ApiError && /no passkey/i.test(e.detail)) {
        card.advise('no-passkey');
        return;
      }
      // No passkey answered where one most likely is not: say where it is, not "try again".
      if (yes && place === 'elsewhere' && !(e instanceof ApiError) && errorName(e) === 'NotAllowedError') {
        errorNode.textContent = FAILED_ELSEWHERE;
        errorNode.hidden = false;
        return;
      }
      await report(e, errorNode);
    }
  }

  approve.addEventListener('click', () => void answer(true, approve));
  deny.addEventListener('click', () => void answer(false, deny));
  card.advise(approvePlace(deviceFacts()));
  card.tick();
  return card;
}
