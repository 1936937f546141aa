/**
 * Ending sign-ins when what they stand on goes (decisions §18): the grant revoked, the agent removed
 * or revoked. Inside the caller's transaction: the live sign-ins end (their refresh tokens die) and
 * each client with a `backchannel_logout_uri` gets a logout queued (logout.ts), written together with
 * the change that caused it.
 */
import type { OidcSecret } from '../../crypto/oidc-secret.ts';
import type { Repos } from '../../store/ports.ts';
import { queueBackchannelLogout } from './logout.ts';

export async function endSignIns(repos: Repos, secret: OidcSecret, of: { grantId: string } | { agentId: string }, now: number): Promise<number> {
  const ended = await repos.oidcSignIns.endLive(of, now);
  for (const s of ended) {
    const client = await repos.oidcClients.byId(s.clientId);
    if (!client?.backchannelLogoutUri) continue;
    await queueBackchannelLogout(repos, { userId: s.userId, clientId: s.clientId, uri: client.backchannelLogoutUri, sub: secret.pairwise(s.site, s.userId), sid: s.sid, now });
  }
  return ended.length;
}
