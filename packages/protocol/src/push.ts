/**
 * The push payload (decisions §13): what the service sends to an owner's device, encrypted, and what
 * the owner app's service worker reads. One definition for both sides; docs/reference/notifications.md
 * documents each field. Never a secret, a token or a WebAuthn challenge: only what a lock screen may
 * show and where to open the app.
 */
export type PushType = 'approval' | 'dismiss' | 'note' | 'agent_added' | 'takeover' | 'test';

export interface PushPayload {
  type: PushType;
  /** The notification's id (`n_...`), or for `dismiss` the id of the notification to close. */
  id: string;
  title: string;
  body: string;
  /** Same-origin path the app opens when the notification is tapped, e.g. `/app#requests/t_...`. */
  url: string;
  /** For approvals: `access` or `stepup` (later `oidc`, `plan`, `takeover`, ...). */
  kind?: string;
  txn_id?: string;
  /** ISO 8601: when the request stops waiting for an answer. */
  expires_at?: string;
  /** True during the owner's quiet hours: shown without sound or vibration. */
  silent?: boolean;
  /** A step-up or agent approval bound to details (decisions §29): the summary shown as written, and its digest. */
  details?: { summary: string; digest: string };
}
