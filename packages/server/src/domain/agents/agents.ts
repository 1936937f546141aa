import { jwkThumbprint } from '@mandate/protocol';
import type { AgentFlag, AgentRecord, Repos, Store } from '../../store/ports.ts';
import type { Clock } from '../clock.ts';
import { badRequest, notFound } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';
import { agentPublicKey } from './agent-key.ts';
import { verifyAgentJwt } from './agent-jwt.ts';

/**
 * Called inside the transaction that stops an agent (removal or `revoked` flag), so that what other
 * concepts hold for it (open requests, grants) ends with it atomically.
 */
export type AgentStoppedHook = (repos: Repos, agent: AgentRecord, revSeq: number) => Promise<void>;

export const AGENT_NAME_MAX = 100;

/** The owner's agents: creation with a public key, listing, removal, flags and agent JWTs. */
export class Agents {
  private readonly stoppedHooks: AgentStoppedHook[] = [];

  constructor(private readonly store: Store, private readonly clock: Clock) {}

  onStopped(hook: AgentStoppedHook): void {
    this.stoppedHooks.push(hook);
  }

  async create(userId: string, input: { name: string; jwk?: unknown; pubkey?: string | null }): Promise<AgentRecord> {
    const name = input.name.trim();
    if (!name || name.length > AGENT_NAME_MAX) throw badRequest(`name must be 1 to ${AGENT_NAME_MAX} characters`);
    const publicJwk = agentPublicKey(input);
    const agent: AgentRecord = {
      id: newId('ag'),
      userId,
      name,
      publicJwk,
      jkt: await jwkThumbprint(publicJwk),
      status: 'active',
      flag: 'ok',
      flagRevSeq: null,
      createdAt: this.clock.now(),
      removedAt: null,
    };
    await this.store.agents.create(agent);
    return agent;
  }

  list(userId: string): Promise<AgentRecord[]> {
    return this.store.agents.listForUser(userId);
  }

  /** The owner's live agent, or 404 (also for another owner's agent: no probing of ids). */
  async owned(userId: string, agentId: string): Promise<AgentRecord> {
    const agent = looksLikeId('ag', agentId) ? await this.store.agents.byId(agentId) : undefined;
    if (!agent || agent.userId !== userId || agent.status === 'removed') throw notFound('agent not found');
    return agent;
  }

  /** Removal: the agent is tombstoned, the revocation sequence advances, hooks end what it held. */
  async remove(userId: string, agentId: string): Promise<void> {
    await this.owned(userId, agentId);
    await this.store.transaction(async (repos) => {
      const revSeq = await new RevocationSequence(repos.counters).advance();
      const removedAt = this.clock.now();
      await repos.agents.update(agentId, { status: 'removed', removedAt, flagRevSeq: revSeq });
      const agent = await repos.agents.byId(agentId);
      if (agent) for (const hook of this.stoppedHooks) await hook(repos, agent, revSeq);
    });
  }

  /** `revoked` blocks the agent everywhere, `ok` unblocks it; every change advances `rev_seq`. */
  async setFlag(userId: string, agentId: string, flag: AgentFlag): Promise<AgentRecord> {
    const current = await this.owned(userId, agentId);
    if (current.flag === flag) return current;
    return this.store.transaction(async (repos) => {
      const revSeq = await new RevocationSequence(repos.counters).advance();
      await repos.agents.update(agentId, { flag, flagRevSeq: flag === 'ok' ? null : revSeq });
      const agent = (await repos.agents.byId(agentId)) as AgentRecord;
      if (flag === 'revoked') for (const hook of this.stoppedHooks) await hook(repos, agent, revSeq);
      return agent;
    });
  }

  /** Agent JWT check for agent endpoints (decisions §4). */
  verifyJwt(token: unknown, agentId: string): Promise<AgentRecord> {
    return verifyAgentJwt(this.store.agents, this.clock, token, agentId);
  }
}
