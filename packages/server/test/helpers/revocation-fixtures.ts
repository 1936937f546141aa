/**
 * Fixtures for the revocation, status, notes, reputation and activity tests: agents with real keys,
 * agent JWTs and passes minted at the test clock's time, grants revoked through the store.
 */
import { randomBytes } from 'node:crypto';
import { type PassClaims, PASS_TYP, createAgentJwt, generateAgentKeyPair, jwkThumbprint } from '@mandate/protocol';
import type { FastifyInstance } from 'fastify';
import { seconds } from '../../src/domain/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import { RevocationSequence } from '../../src/domain/revocation/rev-seq.ts';
import type { GrantRecord } from '../../src/store/ports.ts';
import { type TestApp, json, signUp } from './app.ts';

export type Owner = Awaited<ReturnType<typeof signUp>>;

export interface TestAgent {
  id: string;
  privateKey: CryptoKey;
  jkt: string;
  owner: Owner;
}

export async function createAgent(app: FastifyInstance, owner: Owner, name = 'Shopper'): Promise<TestAgent> {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const res = await app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name, jwk: publicJwk } });
  if (res.statusCode !== 200) throw new Error(`agent creation failed: ${res.statusCode} ${res.body}`);
  return { id: json<{ id: string }>(res).id, privateKey, jkt: await jwkThumbprint(publicJwk), owner };
}

/** An agent JWT valid at the test clock's time. */
export function agentJwt(t: TestApp, agent: TestAgent, agentId = agent.id): Promise<string> {
  return createAgentJwt(agent.privateKey, agentId, { iat: seconds(t.clock.now()) });
}

/** A pass as the pass engineer mints it, signed by the service's current key at the clock's time. */
export async function mintPass(t: TestApp, agent: TestAgent, site: string, over: Partial<PassClaims> = {}, typ = PASS_TYP): Promise<string> {
  const iat = seconds(t.clock.now());
  const claims: PassClaims = {
    iss: t.config.baseUrl,
    sub: agent.id,
    aud: site,
    user: agent.owner.user.id,
    scope: ['list'],
    cnf: { dpop: agent.jkt, jkt: agent.jkt },
    type: 'access',
    iat,
    exp: iat + 600,
    jti: randomBytes(16).toString('base64url'),
    grant: newId('gr'),
    rev_seq: await t.services.store.counters.current('rev_seq'),
    ...over,
  };
  return t.services.keys.sign(claims, typ);
}

/** A grant row for the agent at the site, as the approvals engineer would create it. */
export async function createGrant(t: TestApp, agent: TestAgent, site: string): Promise<GrantRecord> {
  const grant: GrantRecord = {
    id: newId('gr'),
    userId: agent.owner.user.id,
    agentId: agent.id,
    site,
    scopes: ['list'],
    userInfo: [],
    status: 'active',
    createdAt: t.clock.now(),
    expiresAt: null,
    usesLeft: null,
    refreshHash: null,
    passesIssued: 0,
    revokedAt: null,
    revSeq: null,
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
