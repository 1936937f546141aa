import { decodeJwt } from 'jose';
import { type PassClaims, type RevocationClaims, revocationVerdict, verifyRevocationSnapshot } from '@mandate/protocol';
import { seconds } from '../../src/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import { expectStatus, json, type TestApp } from './app.ts';
import type { TestAgent } from './agents.ts';
import { requestToken, verify, verifyBody } from './passes.ts';

/** The revocation snapshot, verified as a site's local verifier does. */
export async function snapshot(t: TestApp): Promise<RevocationClaims> {
  const res = await t.app.inject({ url: '/api/v1/revocation' });
  expectStatus(res, 200);
  const jwks = json<{ keys: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
  return verifyRevocationSnapshot(json<{ signature: string }>(res).signature, { keys: jwks, issuer: t.config.baseUrl, now: seconds(t.clock.now()) });
}

/**
 * How the service and a site treat an agent and a pass it holds: cloud verify's answer, a local
 * verifier's (from the snapshot), the token endpoint's status and the agent status's global flag.
 */
export async function standing(t: TestApp, agent: TestAgent, pass: string): Promise<{ cloud: string; local: string | null; token: number; flag: string }> {
  const cloud = await verify(t, await verifyBody(t, agent, pass));
  const local = revocationVerdict(decodeJwt(pass) as unknown as PassClaims, await snapshot(t));
  const token = (await requestToken(t, agent)).statusCode;
  const flag = json<{ global_flag: string }>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` })).global_flag;
  return { cloud: cloud.valid ? 'valid' : String(cloud.error), local, token, flag };
}

/** A live OIDC sign-in of the agent at a client with a back-channel logout URI: its end queues a logout. */
export async function signedInAtSite(t: TestApp, agent: TestAgent): Promise<string> {
  const now = t.clock.now();
  const clientId = newId('c');
  await t.services.store.oidcClients.create({
    id: clientId, userId: agent.owner.user.id, name: 'Shop', redirectUris: ['https://shop.example/cb'], backchannelLogoutUri: 'https://shop.example/logout',
    isPublic: true, secretHash: null, secretSetAt: null, verificationToken: 'v', verifiedOrigins: [], verifiedAt: null, createdAt: now, updatedAt: now,
  });
  const sid = newId('n');
  await t.services.store.oidcSignIns.create({
    sid, clientId, userId: agent.owner.user.id, agentId: agent.id, grantId: 'gr_x', site: 'shop.example', scopes: ['openid'], amr: ['pwd'],
    authTime: seconds(now), refreshHash: newId('n'), createdAt: now, expiresAt: now + 86_400_000, endedAt: null, dpopJkt: null, resource: null,
  });
  return sid;
}

/** Whether a back-channel logout for `sid` waits in the outbox. */
export async function logoutQueued(t: TestApp, sid: string): Promise<boolean> {
  return (await t.services.store.outbox.list({ kind: 'logout', limit: 1000 })).some((m) => JSON.stringify(m.payload).includes(sid));
}
