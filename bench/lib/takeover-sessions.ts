import { createAgentJwt } from '@mandate/protocol';
import { AGENT_LIMITS } from '../../packages/server/src/domain/agents/agents.ts';
import type { Store } from '../../packages/server/src/store/ports/index.ts';
import type { RelayEnds } from './relay-load.ts';
import { seedAgents, seedOwner, type BenchAgent, type BenchOwner } from './seed.ts';

/**
 * Mandate's side of the take-over relay benchmark: agents seeded in the store (one open take-over per
 * agent, so one agent per session), and their sessions opened over HTTP as agents open them.
 */

export interface TakeoverAgent {
  owner: BenchOwner;
  agent: BenchAgent;
}

/** `count` agents, as many per owner as an owner may have (100): sessions of many owners, as on a real node. */
export async function seedTakeoverAgents(store: Store, count: number, now: number): Promise<TakeoverAgent[]> {
  const out: TakeoverAgent[] = [];
  while (out.length < count) {
    const owner = await seedOwner(store, now);
    for (const agent of await seedAgents(store, owner, Math.min(AGENT_LIMITS.livePerOwner, count - out.length), now)) out.push({ owner, agent });
  }
  return out;
}

/**
 * Opens one take-over per agent with `POST /api/v1/takeover` (16 at a time), and answers each
 * session's two WebSocket ends: the agent's with its relay token, the owner's with the session token.
 */
export async function openTakeovers(origin: string, agents: readonly TakeoverAgent[]): Promise<RelayEnds[]> {
  const ws = origin.replace(/^http/, 'ws');
  const ends: RelayEnds[] = new Array(agents.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < agents.length; i = next++) {
      const { owner, agent } = agents[i]!;
      const res = await fetch(`${origin}/api/v1/takeover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agent.id, agent_jwt: await createAgentJwt(agent.privateKey, agent.id, { lifetimeSec: 60 }), url: 'https://shop.example/checkout', reason: 'a captcha' }),
      });
      const body = (await res.json()) as { takeover_id?: string; agent_token?: string };
      if (res.status !== 200 || !body.takeover_id || !body.agent_token) throw new Error(`POST /api/v1/takeover: ${res.status} ${JSON.stringify(body)}`);
      ends[i] = {
        agentUrl: `${ws}/api/v1/takeover/${body.takeover_id}/agent`,
        agentHeaders: { authorization: `Bearer ${body.agent_token}` },
        ownerUrl: `${ws}/api/takeover/${body.takeover_id}/owner`,
        ownerHeaders: { authorization: `Bearer ${owner.sessionToken}` },
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, agents.length) }, worker));
  return ends;
}

/** The bare relay's ends for `count` sessions (`/relay/<id>/agent|owner`, no credentials). */
export function bareRelayEnds(origin: string, count: number): RelayEnds[] {
  const ws = origin.replace(/^http/, 'ws');
  return Array.from({ length: count }, (_, i) => ({ agentUrl: `${ws}/relay/s${i}/agent`, agentHeaders: {}, ownerUrl: `${ws}/relay/s${i}/owner`, ownerHeaders: {} }));
}
