// The card for one call of a connected app's tool (decisions §28): a site step-up filed with an
// app's pass. It says who asks (the app and the host of its client_id), which tool, at which
// resource, the arguments as the server summarised them, and that the approval is bound to exactly
// those arguments and used once.
import { el } from '../dom.ts';
import type { PendingApp, PendingRequest } from '../types.ts';
import { appLabel } from './app-card.ts';
import { boundDetailsBlock } from './bound-details.ts';

export const APP_CALL_LABEL = 'Run a tool';

/** The app a request is a tool call of, or null: only a site step-up of an app is one. */
export const appCall = (p: PendingRequest): PendingApp | null => (p.kind === 'stepup' && p.filed_by === 'site' && p.app ? p.app : null);

/** Where the tool runs: the grant's resource URL, or the request's site when the service could not tell. */
const placeOf = (p: PendingRequest, app: PendingApp): string => app.resource ?? p.site;

/** "<app> (<client host>) asks to run <tool> at <resource>". */
export function appCallHeading(p: PendingRequest, app: PendingApp): HTMLHeadingElement {
  return el('h3', {},
    el('strong', { text: appLabel(p.agent, app.client_host) }), ' asks to run ',
    el('span', { className: 'code tool', text: p.action ?? '' }), ' at ',
    el('span', { className: 'site resource', text: placeOf(p, app) }));
}

export function appCallBody(p: PendingRequest): (HTMLElement | null)[] {
  const args = boundDetailsBlock(p, 'arguments');
  return [
    args ?? el('p', { className: 'hint no-arguments', text: 'The server sent no summary of the arguments.' }),
    el('p', { className: 'hint', text: 'Approve only if this is exactly what you want done. The approval works once, for a call with exactly these arguments; any other call asks you again.' }),
  ];
}

export function appCallOutcome(p: PendingRequest, app: PendingApp, approved: boolean): string {
  const tool = p.action ?? '';
  const place = placeOf(p, app);
  return approved
    ? `Approved: ${p.agent} may run ${tool} at ${place} once, with exactly these arguments.`
    : `Denied: ${p.agent} may not run ${tool} at ${place}. What it may do there otherwise stays; revoke it under Agents if you want it gone.`;
}

export const appCallAriaLabel = (p: PendingRequest, app: PendingApp): string => `${APP_CALL_LABEL}: ${appLabel(p.agent, app.client_host)} at ${placeOf(p, app)}`;
