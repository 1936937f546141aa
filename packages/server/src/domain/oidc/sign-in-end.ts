/**
 * Ending sign-ins (decisions §18), always with a back-channel logout to a client that registered a
 * `backchannel_logout_uri` (logout.ts), written in the same transaction as the end:
 * - `endSignIns`: everything of an agent, or of an agent at one site (the agent removed or blocked,
 *   its grant there revoked); `endOidcStanding` does so and also forgets the CIBA subjects there;
 * - `endSignIn`: one sign-in found broken (a code replayed, a rotated refresh token presented again,
 *   its grant gone when it came to refresh).
 * The one exception is the client's own `/oidc/revoke`: the site ended its own sign-in and knows.
 */
import type { OidcSecret } from '../../crypto/oidc-secret.ts';
import type { OidcSignInRecord, Repos, SignInScope } from '../../store/ports/index.ts';
import { queueBackchannelLogout } from './logout.ts';

async function tellClient(repos: Repos, secret: OidcSecret, s: OidcSignInRecord, now: number): Promise<void> {
  const client = await repos.oidcClients.byId(s.clientId);
  if (!client?.backchannelLogoutUri) return;
  await queueBackchannelLogout(repos, { userId: s.userId, clientId: s.clientId, uri: client.backchannelLogoutUri, sub: secret.pairwise(s.site, s.userId), sid: s.sid, now });
}

export async function endSignIns(repos: Repos, secret: OidcSecret, of: SignInScope, now: number): Promise<number> {
  const ended = await repos.oidcSignIns.endLive(of, now);
  for (const s of ended) await tellClient(repos, secret, s, now);
  return ended.length;
}

/**
 * What a revoked grant or a stopped agent ends at the sites (run in that transaction): its live
 * sign-ins, with their logouts, and the subjects the sites' clients were given, so that CIBA's
 * `login_hint` reaches the agent again only after a new sign-in there.
 */
export async function endOidcStanding(repos: Repos, secret: OidcSecret, of: SignInScope, now: number): Promise<void> {
  await endSignIns(repos, secret, of, now);
  await repos.oidcSubjects.forget(of);
}

/** Ends one sign-in; true when this call ended it (and queued its logout). */
export async function endSignIn(repos: Repos, secret: OidcSecret, sid: string, now: number): Promise<boolean> {
  const ended = await repos.oidcSignIns.end(sid, now);
  if (ended) await tellClient(repos, secret, ended, now);
  return ended !== undefined;
}
