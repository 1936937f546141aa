import { createAgentJwt, generateAgentKeyPair, type EcP256PublicJwk } from '@mandate/protocol';
import { seconds } from '../../src/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import { RevocationSequence } from '../../src/domain/revocation/rev-seq.ts';
import type { GrantRecord } from '../../src/store/ports/index.ts';
import { json, signUp, type TestApp } from './app.ts';

/**
 * Owners, agents and grants for the HTTP tests: an agent is created over HTTP with a real key pair,
 * its agent JWTs are signed at the test clock's time; grants are written straight into the store (as
 * the approval flow would create them) and revoked through it (as the grants route does).
 */

export type Owner = Awaited<ReturnType<typeof signUp>>;

export interface TestAgent {
  id: string;
  name: string;
  jkt: string;
  privateKey: CryptoKey;
  publicJwk: EcP256PublicJwk;
  owner: Owner;
  /** A fresh agent JWT, issued at the app's (fixed) time. */
  jwt(): Promise<string>;
}

/** An agent of `owner` (a new owner if none is given), created by POST /api/agents. */
export async function createAgent(t: TestApp, owner?: Owner, name = 'Shopper'): Promise<TestAgent> {
  const o = owner ?? (await signUp(t.app));
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const res = await t.app.inject({ method: 'POST', url: '/api/agents', headers: o.auth, payload: { name, jwk: publicJwk } });
  if (res.statusCode !== 200) throw new Error(`agent creation failed: ${res.statusCode} ${res.body}`);
  const body = json<{ id: string; jkt: string }>(res);
  const agent: TestAgent = { id: body.id, name, jkt: body.jkt, privateKey, publicJwk, owner: o, jwt: () => agentJwt(t, agent) };
  return agent;
}

/** An agent JWT valid at the test clock's time (for `agentId`, the agent's own id by default). */
export function agentJwt(t: TestApp, agent: Pick<TestAgent, 'id' | 'privateKey'>, agentId = agent.id): Promise<string> {
  return createAgentJwt(agent.privateKey, agentId, { iat: seconds(t.clock.now()) });
}

/** An active grant for the agent, by default at shop.example for ['list', 'orders:read'], unlimited. */
export async function createGrant(
  t: TestApp,
  agent: TestAgent,
  o: { site?: string; scopes?: string[]; userInfo?: string[]; expiresAt?: number | null; usesLeft?: number | null; createdAt?: number } = {},
): Promise<GrantRecord> {
  const grant: GrantRecord = {
    id: newId('gr'),
    userId: agent.owner.user.id,
    agentId: agent.id,
    site: o.site ?? 'shop.example',
    scopes: o.scopes ?? ['list', 'orders:read'],
    userInfo: o.userInfo ?? [],
    status: 'active',
    createdAt: o.createdAt ?? t.clock.now(),
    expiresAt: o.expiresAt ?? null,
    usesLeft: o.usesLeft ?? null,
    refreshHash: null,
    passesIssued: 0,
    revokedAt: null,
    revSeq: null,
    supersededAt: null, resource: null,
  };
  await t.services.store.grants.create(grant);
  return grant;
}

/** Revokes a grant the way the grants route does: advance rev_seq and revoke in one transaction. */
export function revokeGrant(t: TestApp, grantId: string): Promise<number> {
  return t.services.store.transaction(async (repos) => {
    const revSeq = await new RevocationSequence(repos.counters).advance();
    if (!(await repos.grants.revoke(grantId, t.clock.now(), revSeq))) throw new Error('grant was not active');
    return revSeq;
  });
}
