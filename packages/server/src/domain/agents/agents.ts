import { jwkThumbprint } from '@mandate/protocol';
import type { AgentFlag, AgentRecord, Repos, Store } from '../../store/ports.ts';
import type { Clock } from '../clock.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import type { RateLimiter } from '../rate-limit.ts';
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
/**
 * Abuse limits on creation: live (not removed) agents per owner, and creations per owner per hour.
 * Each agent can ask the owner for approvals and be reported about, so bulk agents are bulk noise.
 */
export const AGENT_LIMITS = { livePerOwner: 100, createsPerHour: 30 } as const;

/** The owner's agents: creation with a public key, listing, removal, flags and agent JWTs. */
export class Agents {
  private readonly stoppedHooks: AgentStoppedHook[] = [];

  constructor(private readonly store: Store, private readonly clock: Clock, private readonly limiter: RateLimiter) {}

  onStopped(hook: AgentStoppedHook): void {
    this.stoppedHooks.push(hook);
  }

  async create(userId: string, input: { name: string; jwk?: unknown; pubkey?: string | null }): Promise<AgentRecord> {
    const name = input.name.trim();
    if (!name || name.length > AGENT_NAME_MAX) throw badRequest(`name must be 1 to ${AGENT_NAME_MAX} characters`);
    const publicJwk = agentPublicKey(input);
    await this.limiter.check(`agents:create:${userId}`, AGENT_LIMITS.createsPerHour, 3600);
    // Counted, not locked: concurrent creations may pass the cap by a few, the hourly limit bounds that.
    if ((await this.store.agents.listForUser(userId)).length >= AGENT_LIMITS.livePerOwner) {
      throw conflict(`agent limit reached: an owner may have at most ${AGENT_LIMITS.livePerOwner} agents; remove one you no longer use first`);
    }
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
      unblockedAt: null,
      unblockedRevSeq: null,
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

  /**
   * `revoked` blocks the agent everywhere, `ok` unblocks it; every change advances `rev_seq`. Lifting
   * a block records when and at which rev_seq it took effect: the snapshot keeps listing it for one
   * pass lifetime, so local verifiers go on refusing passes minted before the block.
   */
  async setFlag(userId: string, agentId: string, flag: AgentFlag): Promise<AgentRecord> {
    const current = await this.owned(userId, agentId);
    if (current.flag === flag) return current;
    return this.store.transaction(async (repos) => {
      const revSeq = await new RevocationSequence(repos.counters).advance();
      const lifted = current.flag === 'revoked' ? { unblockedAt: this.clock.now(), unblockedRevSeq: current.flagRevSeq ?? revSeq - 1 } : {};
      await repos.agents.update(agentId, { flag, flagRevSeq: flag === 'ok' ? null : revSeq, ...lifted });
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
