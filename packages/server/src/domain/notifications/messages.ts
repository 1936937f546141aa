import type { ApprovalDetails } from '@mandate/protocol';
import type { NotificationType } from '../../store/ports/index.ts';
import type { PushPayload, PushType } from '../../delivery/push-port.ts';
import { appLabel } from '../apps/client-host.ts';

/**
 * What the owner reads on a lock screen and in the inbox, built from an event. Text an agent wrote
 * (a note, a step-up action) is shown as written but cut to a length every push service carries:
 * the encrypted web push record holds at most 4 kB, and FCM data at most 4 kB.
 */
export const TITLE_MAX = 120;
export const BODY_MAX = 600;

export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

export interface OwnerMessage {
  /** The inbox row's type; null: pushed only, never kept (a test). */
  type: NotificationType | null;
  /** The push `type`. */
  push: PushType;
  title: string;
  body: string;
  url: string;
  txnId?: string;
  kind?: string;
  /** Epoch ms: when the request stops waiting. */
  expiresAt?: number;
  /** The take-over this message is about (kept on the inbox row; the push names it in `url`). */
  takeoverId?: string;
  /** The details an approval is bound to: pushed with it (at most 500 characters of summary). */
  details?: ApprovalDetails;
}

export const requestUrl = (txnId: string): string => `/app#requests/${txnId}`;
export const INBOX_URL = '/app#notifications';

export interface ApprovalEvent {
  txnId: string;
  /** `access` (an access request) or `stepup`; later `oidc`, `plan`, `takeover`, `approval`. */
  kind: string;
  /** `site` for a step-up the site filed (decisions §28): the card says the site asks. */
  filedBy?: 'site';
  /**
   * Set when the agent is a connected app (decisions §28): a step-up its server filed is one call of
   * a tool (`action`) at `resource`, its arguments summarised in `details`.
   */
  app?: { clientHost: string | null; resource: string };
  agentName: string;
  site: string;
  scopes?: readonly string[];
  userInfo?: readonly string[];
  action?: string | null;
  /** CIBA's `binding_message` (kind `oidc`): shown as written, so the owner can match it with the site. */
  bindingMessage?: string | null;
  /** The details a step-up or agent approval is bound to (decisions §29): carried to the card as written. */
  details?: ApprovalDetails | null;
  expiresAt: number;
}

const FIELD_NAMES: Record<string, string> = { 'user:name': 'your name', 'user:email': 'your email', 'user:phone': 'your phone number' };

export function approvalMessage(e: ApprovalEvent): OwnerMessage {
  const base = { type: 'approval' as const, push: 'approval' as const, url: requestUrl(e.txnId), txnId: e.txnId, kind: e.kind, expiresAt: e.expiresAt, ...(e.details && { details: e.details }) };
  if (e.kind === 'stepup' && e.filedBy === 'site' && e.app) {
    const who = appLabel(e.agentName, e.app.clientHost);
    const args = e.details ? `${e.details.summary} · bound to exactly these arguments` : 'no summary of the arguments';
    return { ...base, title: clip(`${who} asks to run ${e.action ?? 'a tool'} at ${e.app.resource}`, TITLE_MAX), body: clip(`${args} · approve with your passkey`, BODY_MAX) };
  }
  if (e.kind === 'stepup' && e.filedBy === 'site') {
    return { ...base, title: clip(`${e.site} asks you to approve an action for ${e.agentName}`, TITLE_MAX), body: clip(`${e.action ?? 'a sensitive action'} · approve with your passkey`, BODY_MAX) };
  }
  if (e.kind === 'stepup') {
    return { ...base, title: clip(`${e.agentName} asks to act on ${e.site}`, TITLE_MAX), body: clip(`${e.action ?? 'a sensitive action'} · approve with your passkey`, BODY_MAX) };
  }
  if (e.kind === 'plan') {
    return { ...base, title: clip(`${e.agentName} asks you to pre-approve a plan`, TITLE_MAX), body: clip(`${e.action ?? 'A scheduled task'} · choose the steps, approve with your passkey`, BODY_MAX) };
  }
  if (e.kind === 'agent_approval') {
    return { ...base, title: clip(`${e.agentName} asks before acting on ${e.site}`, TITLE_MAX), body: clip(`${e.action ?? 'an action'} · approve with your passkey`, BODY_MAX) };
  }
  if (e.kind === 'oidc') {
    const what = e.bindingMessage ? `The site says: ${e.bindingMessage}` : `Sign-in (${(e.scopes ?? []).join(', ')})`;
    return { ...base, title: clip(`${e.agentName} asks to sign in to ${e.site}`, TITLE_MAX), body: clip(`${what} · approve with your passkey`, BODY_MAX) };
  }
  const fields = (e.userInfo ?? []).map((f) => FIELD_NAMES[f] ?? f);
  const scopes = (e.scopes ?? []).join(', ');
  const body = `Wants: ${scopes || 'access'}${fields.length ? ` · and ${fields.join(', ')}` : ''}`;
  return { ...base, title: clip(`${e.agentName} asks for access to ${e.site}`, TITLE_MAX), body: clip(body, BODY_MAX) };
}

/**
 * The title always starts with the agent's name: a note titled "New passkey added" must not pass on
 * a lock screen for a notice from Mandate itself.
 */
export function noteMessage(agentName: string, note: { title: string; text: string }): OwnerMessage {
  return { type: 'note', push: 'note', url: INBOX_URL, title: clip(note.title ? `${agentName}: ${note.title}` : `Note from ${agentName}`, TITLE_MAX), body: clip(note.text, BODY_MAX) };
}

export function agentAddedMessage(agentName: string, how: string): OwnerMessage {
  return { type: 'agent_added', push: 'agent_added', url: '/app#agents', title: clip(`New agent: ${agentName}`, TITLE_MAX), body: clip(`${agentName} was added to your account ${how}. Not you? Remove it under Agents.`, BODY_MAX) };
}

/** Security notices (a new passkey, later recovery and sign-ins from a new place) are pushed as `note`. */
export function securityMessage(title: string, body: string): OwnerMessage {
  return { type: 'security', push: 'note', url: '/app#account', title: clip(title, TITLE_MAX), body: clip(body, BODY_MAX) };
}

/** An agent approval approved without a card (approval mode or plan, decisions §19): kept in the inbox. */
export function autoApprovedMessage(e: { txnId: string; agentName: string; site: string; what: string; reason: string }): OwnerMessage {
  return { type: 'auto_approved', push: 'note', url: requestUrl(e.txnId), txnId: e.txnId, title: clip(`${e.agentName} acted on ${e.site} without asking`, TITLE_MAX), body: clip(`${e.what} · ${e.reason}`, BODY_MAX) };
}

export const TEST_MESSAGE: OwnerMessage = { type: null, push: 'test', url: '/app#account', title: 'Mandate test notification', body: 'Notifications reach this device. Approval requests will appear like this.' };

/** The push payload of a message (docs/reference/notifications.md): no token, no secret. */
export function pushPayload(id: string, m: OwnerMessage, silent: boolean): PushPayload {
  const p: PushPayload = { type: m.push, id, title: m.title, body: m.body, url: m.url };
  if (m.kind !== undefined) p.kind = m.kind;
  if (m.txnId !== undefined) p.txn_id = m.txnId;
  if (m.expiresAt !== undefined) p.expires_at = new Date(m.expiresAt).toISOString();
  if (silent) p.silent = true;
  if (m.details !== undefined) p.details = { summary: m.details.summary, digest: m.details.digest };
  return p;
}

/** Tells the other devices to close the card of a request that was answered or expired. */
export function dismissPayload(notificationId: string, txnId: string): PushPayload {
  return { type: 'dismiss', id: notificationId, title: '', body: '', url: requestUrl(txnId), txn_id: txnId };
}

/** An agent asks the owner to take over its browser (decisions §21): opens /app/takeover/{sid}. */
export function takeoverMessage(e: { takeoverId: string; agentName: string; url: string; reason: string; expiresAt: number }): OwnerMessage {
  let host = e.url;
  try { host = new URL(e.url).host; } catch { /* shown as given */ }
  return { type: 'takeover', push: 'takeover', url: `/app/takeover/${e.takeoverId}`, takeoverId: e.takeoverId, kind: 'takeover', expiresAt: e.expiresAt, title: clip(`${e.agentName} needs you on ${host}`, TITLE_MAX), body: clip(`${e.reason || 'Take over the browser'} · tap to take over`, BODY_MAX) };
}
