import type { Repos } from '../../store/ports/index.ts';

/** Decisions §12, §18: a relying party is told for 15 minutes; after that the message is given up. */
export const BACKCHANNEL_LOGOUT_WINDOW_MS = 15 * 60_000;
export const BACKCHANNEL_CHANNEL = 'backchannel';
export const BACKCHANNEL_LOGOUT_KIND = 'logout';

export interface BackchannelLogoutRequest {
  /** The owner whose sign-in ended (kept for diagnosis and the owner's history; may be deleted meanwhile). */
  userId: string;
  clientId: string;
  /** The client's registered `backchannel_logout_uri`. */
  uri: string;
  /** The person as this client knows them (pairwise `sub` of the ID token). */
  sub: string;
  /** The `sid` the ID token carried. */
  sid: string;
  now: number;
}

/**
 * The one hook that ends a sign-in at a relying party (OpenID Connect Back-Channel Logout 1.0).
 * Called by whatever ends an OIDC sign-in: an agent removed or blocked, the grant of the sign-in
 * revoked, a connection ended, an account deleted (those callers arrive with the OIDC sign-in work),
 * once per (client, sid) with a `backchannel_logout_uri`.
 *
 * It only queues: pass the caller's transaction repositories so the logout is written together with
 * the change that caused it (never one without the other). The outbox worker signs the
 * `logout_token` at each try (delivery/backchannel.ts), so the stored payload holds no token, and
 * retries with backoff until `expiresAt`. The worker's poll (OUTBOX_POLL_MS) picks the message up;
 * a caller that wants it sent at once wakes the worker after its transaction commits
 * (`Notifier.wake()`).
 */
export async function queueBackchannelLogout(repos: Pick<Repos, 'outbox'>, req: BackchannelLogoutRequest): Promise<number> {
  return repos.outbox.add({
    userId: req.userId,
    channel: BACKCHANNEL_CHANNEL,
    kind: BACKCHANNEL_LOGOUT_KIND,
    payload: { uri: req.uri, client_id: req.clientId, sub: req.sub, sid: req.sid },
    createdAt: req.now,
    nextAttemptAt: req.now,
    expiresAt: req.now + BACKCHANNEL_LOGOUT_WINDOW_MS,
    topic: null,
    deviceId: null,
  });
}
