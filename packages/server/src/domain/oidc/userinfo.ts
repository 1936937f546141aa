/**
 * /oidc/userinfo: the access token's sign-in, while it lives (not ended, grant live, agent kept),
 * as `{sub, act, name}`. Email and phone are not released yet (they need the owner's approval of
 * that field).
 */
import { verifyAccessToken } from '../../crypto/oidc-access-token.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { isGrantLive } from '../grants/usable.ts';
import type { OidcDeps } from './deps.ts';
import { invalidToken } from './oauth-error.ts';
import { type Identity, identityOf } from './tokens.ts';

export async function userinfo(d: OidcDeps, authorization: string | undefined): Promise<Identity> {
  const m = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization?.trim() ?? '');
  if (!m?.[1]) throw invalidToken('send the access token as Authorization: Bearer <token>');
  const now = d.clock.now();
  const claims = await verifyAccessToken(d.keys, m[1], d.issuer, now);
  if (!claims || typeof claims.sid !== 'string') throw invalidToken('the access token is invalid or expired');
  const signIn = await d.store.oidcSignIns.bySid(claims.sid);
  if (!signIn || signIn.endedAt !== null || signIn.expiresAt <= now || claims.client_id !== signIn.clientId) throw invalidToken('the sign-in has ended');
  const [agent, grant] = await Promise.all([d.store.agents.byId(signIn.agentId), d.store.grants.byId(signIn.grantId)]);
  if (!agent || isAgentBlocked(agent) || !grant || !isGrantLive(grant, now)) throw invalidToken('the sign-in has ended');
  const who = await identityOf(d, signIn);
  if (!who || who.sub !== claims.sub) throw invalidToken('the sign-in has ended');
  return who;
}
