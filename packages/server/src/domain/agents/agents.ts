import { jwkThumbprint } from '@mandate/protocol';
import type { AgentFlag, AgentRecord, AgentsRepo, Repos, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { looksLikeId, newId } from '../ids.ts';
import { QUOTAS, countHourly, quotaExceeded } from '../quotas.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';
import { agentPublicKey } from './agent-key.ts';
import { verifyAgentJwt } from './agent-jwt.ts';

/**
 * Called inside the transaction that stops an agent (removal or `revoked` flag), so that what other
 * concepts hold for it (open requests, grants) ends with it atomically.
 */
export type AgentStoppedHook = (repos: Repos, agent: AgentRecord, revSeq: number) => Promise<void>;

/**
 * What a caller other than the owner's app adds to a creation (the operator API): a check and a write
 * run in the creation's transaction, under the owner's quota lock, before and after the insert; the
 * words the owner's notice uses for how the agent came; more detail for the activity record.
 */
export interface CreationContext {
  within?: (repos: Repos) => Promise<void>;
  after?: (repos: Repos, agent: AgentRecord) => Promise<void>;
  how: string;
  detail?: Record<string, unknown>;
}

/** Runs after an agent is created; `how` says where it came from, for the owner's notice. */
export type AgentCreatedHook = (agent: AgentRecord, how: string) => Promise<void>;

export const AGENT_NAME_MAX = 100;
/**
 * Abuse limits on creation: live (not removed) agents per owner, and creations per owner per hour.
 * Each agent can ask the owner for approvals and be reported about, so bulk agents are bulk noise.
 */
export const AGENT_LIMITS = { livePerOwner: 100, createsPerHour: 30 } as const;

const AGENT_NOT_FOUND = 'agent not found';

/** Any agent by id, removed ones included, or 404 (also for ids that cannot be ours). */
export async function findAgent(agents: AgentsRepo, agentId: string): Promise<AgentRecord> {
  const agent = looksLikeId('ag', agentId) ? await agents.byId(agentId) : undefined;
  if (!agent) throw notFound(AGENT_NOT_FOUND);
  return agent;
}

/**
 * The owner's agents: creation with a public key, listing, removal, flags and agent JWTs. Creation,
 * removal and flag changes each leave a record in the owner's activity trail.
 */
export class Agents {
  private readonly stoppedHooks: AgentStoppedHook[] = [];
  private readonly createdHooks: AgentCreatedHook[] = [];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    private readonly activity: Activity,
  ) {}

  onStopped(hook: AgentStoppedHook): void {
    this.stoppedHooks.push(hook);
  }

  /** Runs after an agent is created (the owner is told on their devices). */
  onCreated(hook: AgentCreatedHook): void {
    this.createdHooks.push(hook);
  }

  async create(userId: string, input: { name: string; jwk?: unknown; pubkey?: string | null }, ip: string | null = null, context: CreationContext = { how: 'in the app' }): Promise<AgentRecord> {
    const name = input.name.trim();
    if (!name || name.length > AGENT_NAME_MAX) throw badRequest(`name must be 1 to ${AGENT_NAME_MAX} characters`);
    const publicJwk = agentPublicKey(input);
    await this.limiter.check(`agents:create:${userId}`, AGENT_LIMITS.createsPerHour, 3600);
    const agent: AgentRecord = {
      id: newId('ag'),
      userId,
      name,
      kind: 'agent',
      clientId: null,
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
    // Counted under the owner's quota lock, so concurrent creations on any nodes cannot pass the cap:
    // the agent list (GET /api/agents) is bounded by it exactly.
    await this.store.transaction(async (repos) => {
      await repos.quotas.lockOwner(userId);
      if ((await repos.quotas.liveAgents(userId)) >= AGENT_LIMITS.livePerOwner) {
        throw conflict(`agent limit reached: an owner may have at most ${AGENT_LIMITS.livePerOwner} agents; remove one you no longer use first`);
      }
      await context.within?.(repos);
      await repos.agents.create(agent);
      await context.after?.(repos, agent);
    });
    await this.activity.record({ userId, action: 'agent.created', agentId: agent.id, detail: { name: agent.name, ...context.detail }, ip });
    for (const hook of this.createdHooks) await hook(agent, context.how);
    return agent;
  }

  list(userId: string): Promise<AgentRecord[]> {
    return this.store.agents.listForUser(userId);
  }

  /** The owner's live agent, or 404 (also for another owner's agent: no probing of ids). */
  async owned(userId: string, agentId: string): Promise<AgentRecord> {
    const agent = await findAgent(this.store.agents, agentId);
    if (agent.userId !== userId || agent.status === 'removed') throw notFound(AGENT_NOT_FOUND);
    return agent;
  }

  /** Removal: the agent is tombstoned, the revocation sequence advances, hooks end what it held. */
  async remove(userId: string, agentId: string, ip: string | null = null): Promise<void> {
    await this.owned(userId, agentId);
    await this.store.transaction((repos) => this.tombstone(repos, agentId));
    await this.activity.record({ userId, action: 'agent.removed', agentId, ip });
  }

  /**
   * Account deletion (domain/privacy): every agent of the owner not yet removed is removed as by
   * `remove`, in the caller's transaction (`repos`): tombstoned at a new `rev_seq`, and the stopped
   * hooks end its requests, grants and OIDC sign-ins. Answers the ids removed.
   */
  async removeAllWithin(repos: Repos, userId: string): Promise<string[]> {
    const live = await repos.agents.listForUser(userId);
    for (const agent of live) await this.tombstone(repos, agent.id);
    return live.map((a) => a.id);
  }

  /**
   * Removal in the caller's transaction (`repos`), as by `remove`: tombstoned at a new `rev_seq`,
   * and the stopped hooks end its requests, grants and OIDC sign-ins (back-channel logouts queued).
   * False when the agent is unknown or already removed (nothing is done). The caller records it.
   */
  async removeWithin(repos: Repos, agentId: string): Promise<boolean> {
    const agent = await repos.agents.byId(agentId);
    if (!agent || agent.status === 'removed') return false;
    await this.tombstone(repos, agentId);
    return true;
  }

  /** The agent is tombstoned, the revocation sequence advances, hooks end what it held. */
  private async tombstone(repos: Repos, agentId: string): Promise<void> {
    const revSeq = await new RevocationSequence(repos.counters).advance();
    const removedAt = this.clock.now();
    await repos.agents.update(agentId, { status: 'removed', removedAt, flagRevSeq: revSeq });
    const agent = await repos.agents.byId(agentId);
    if (agent) for (const hook of this.stoppedHooks) await hook(repos, agent, revSeq);
  }

  /**
   * `revoked` blocks the agent everywhere, `ok` unblocks it; every change advances `rev_seq`. Lifting
   * a block records when and at which rev_seq it took effect: the snapshot keeps listing it for one
   * pass lifetime, so local verifiers go on refusing passes minted before the block. At most
   * QUOTAS.flagChangesPerAgentPerHour calls per agent per hour (429 beyond): each one writes the
   * revocation sequence and the trail, so a flip-flopping script must not churn them.
   */
  async setFlag(userId: string, agentId: string, flag: AgentFlag, ip: string | null = null): Promise<AgentRecord> {
    const current = await this.owned(userId, agentId);
    const limit = QUOTAS.flagChangesPerAgentPerHour;
    await countHourly(this.store.rateCounters, this.clock, `agent-flag-hour:${current.id}`, limit, (retryAfter) =>
      quotaExceeded('flag_changes_per_hour', `an agent's flag may be changed at most ${limit} times per hour`, retryAfter),
    );
    const agent = current.flag === flag ? current : await this.changeFlag(current, flag);
    // Recorded also when the flag was already set: the owner did ask for it.
    await this.activity.record({ userId, action: 'agent.flagged', agentId: agent.id, detail: { flag: agent.flag }, ip });
    return agent;
  }

  private changeFlag(current: AgentRecord, flag: AgentFlag): Promise<AgentRecord> {
    return this.store.transaction(async (repos) => {
      const revSeq = await new RevocationSequence(repos.counters).advance();
      const now = this.clock.now();
      const lifted = current.flag === 'revoked' ? { unblockedAt: now, unblockedRevSeq: current.flagRevSeq ?? revSeq - 1 } : {};
      // flaggedAt dates the flag's entry on the revocation list: 720 s after it, a block refuses no
      // live pass any more and the list's bound may drop it (revocation-bound.ts).
      await repos.agents.update(current.id, { flag, flagRevSeq: flag === 'ok' ? null : revSeq, flaggedAt: flag === 'ok' ? null : now, ...lifted });
      const agent = (await repos.agents.byId(current.id)) as AgentRecord;
      if (flag === 'revoked') for (const hook of this.stoppedHooks) await hook(repos, agent, revSeq);
      return agent;
    });
  }

  /** Agent JWT check for agent endpoints (decisions §4). */
  verifyJwt(token: unknown, agentId: string): Promise<AgentRecord> {
    return verifyAgentJwt(this.store.agents, this.clock, token, agentId);
  }
}
