import { LIMITS } from '@mandate/protocol';
import type { ConsumeResult, ReplayCache, ReplayProof } from './replay-cache.ts';
import { Fifo } from './replay-fifo.ts';
import { HolderCounts } from './replay-holders.ts';

/** The in-memory cache's budget (the verifier's `replayCache` option, or `new MemoryReplayCache(...)`). */
export type MemoryReplayCacheOptions = {
  /**
   * Most proofs remembered at once (and, separately, most agents). About 200 bytes each with few
   * agents, about 600 when every proof is from another agent (measured, docs/sites/sdk.md). Each is
   * kept 250 s, so the default 100 000 serves 400 requests a second without evicting anything.
   */
  maxEntries?: number;
  /** Most proofs one agent may hold; beyond that its own oldest go. Default: a tenth of maxEntries. */
  maxEntriesPerAgent?: number;
};

export const DEFAULT_MAX_ENTRIES = 100_000;
/** An agent may hold this fraction of the cache by default: ten busy agents fill it, none alone. */
const DEFAULT_AGENT_SHARE = 0.1;
const OPTION_NAMES = ['maxEntries', 'maxEntriesPerAgent'];

/** A remembered proof. `iat` is the latest the proof may carry (its own when known). */
type Entry = { agent: Agent; jti: string; iat: number; expiresAt: number; live: boolean };

/**
 * What the cache knows of one agent: how many proofs it holds (oldest first) and its horizon: its
 * proofs signed at or before `horizon` are refused while `now < horizonUntil`, because one of them was
 * evicted unexpired. `horizonOnly` is non-zero (a stamp) while it holds no proof and is kept for its
 * horizon alone.
 */
type Agent = {
  id: string;
  count: number;
  oldest: Fifo<Entry>;
  horizon: number;
  horizonUntil: number;
  horizonOnly: number;
  /** HolderCounts' bookkeeping. */
  slot: number;
};

type HorizonOnly = { agent: Agent; stamp: number };

const isLive = (e: Entry): boolean => e.live;

function count(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`replayCache.${name} must be a positive integer, not ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
  }
  return value;
}

/**
 * The default replay cache, for a site running as one process. A full cache never refuses a proof
 * it has not seen, and never forgets one silently (which would let it be replayed):
 * - expired entries go first (recorded in expiry order, dropped from the old end);
 * - an agent holding its share (`maxEntriesPerAgent`) loses its own oldest proof, and a full cache
 *   evicts the oldest proof of the agent holding the most;
 * - an evicted proof raises its agent's horizon to its `iat`: that agent's proofs signed at or
 *   before it are refused (`'before_horizon'`, answered as `dpop_replay`) until the evicted proof
 *   would have expired, so a replay is still refused, and the agent's new proofs still pass.
 * A flooding agent thus narrows only its own window. Only more than `maxEntries` agents at once
 * (each with a pass for this site) make it forget whole agents: their horizons then apply to every
 * agent it does not remember, so it still fails closed. Operations are O(1) (amortised).
 * Proofs are keyed by jti alone, as cloud verify does (a jti value is accepted once); agents only
 * decide who pays for room.
 */
export class MemoryReplayCache implements ReplayCache {
  readonly maxEntries: number;
  readonly maxEntriesPerAgent: number;
  private readonly byJti = new Map<string, Entry>();
  private readonly agents = new Map<string, Agent>();
  /** Every live entry, in the order recorded: expiry order while the clock moves forward. */
  private readonly byExpiry = new Fifo<Entry>(isLive);
  /** Agents kept only for their horizon (no proof held), roughly in expiry order. */
  private readonly horizonOnly = new Fifo<HorizonOnly>((h) => h.agent.horizonOnly === h.stamp);
  private horizonOnlyCount = 0;
  private stamp = 0;
  private readonly counts = new HolderCounts<Agent>();
  /** The horizon of agents forgotten altogether; it applies to every agent not remembered. */
  private forgotten = { horizon: -Infinity, horizonUntil: -Infinity };

  constructor(options: MemoryReplayCacheOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('replayCache options must be an object');
    const unknown = Object.keys(options).filter((k) => !OPTION_NAMES.includes(k));
    if (unknown.length > 0) throw new TypeError(`replayCache: unknown option ${unknown.join(', ')} (known: ${OPTION_NAMES.join(', ')})`);
    this.maxEntries = count('maxEntries', options.maxEntries, DEFAULT_MAX_ENTRIES);
    this.maxEntriesPerAgent = count('maxEntriesPerAgent', options.maxEntriesPerAgent, Math.ceil(this.maxEntries * DEFAULT_AGENT_SHARE));
    if (this.maxEntriesPerAgent > this.maxEntries) {
      throw new TypeError(`replayCache.maxEntriesPerAgent (${this.maxEntriesPerAgent}) must not exceed maxEntries (${this.maxEntries})`);
    }
  }

  /** Proofs held. */
  get size(): number {
    return this.byJti.size;
  }

  /** Agents remembered (holding proofs, or only a horizon). */
  get agentCount(): number {
    return this.agents.size;
  }

  /** Proofs `agentId` holds now. */
  held(agentId: string): number {
    return this.agents.get(agentId)?.count ?? 0;
  }

  /** Slots in use by the internal lists, dead ones included: stays within a small multiple of size + agentCount. */
  get slots(): number {
    let n = this.byExpiry.length + this.horizonOnly.length;
    for (const agent of this.agents.values()) n += agent.oldest.length;
    return n;
  }

  /**
   * The verifier always passes `proof`. Without it (the older three-argument form) all such proofs
   * count as one agent, each taken to carry the worst `iat` its acceptance window allows, and a proof
   * before that agent's horizon answers false: safe, but after an eviction the whole lot is refused
   * for up to 250 s.
   */
  consume(jti: string, expiresAtSec: number, nowSec: number): Promise<boolean>;
  consume(jti: string, expiresAtSec: number, nowSec: number, proof: ReplayProof): Promise<ConsumeResult>;
  async consume(jti: string, expiresAtSec: number, nowSec: number, proof?: ReplayProof): Promise<ConsumeResult> {
    if (proof !== undefined) return this.record(jti, expiresAtSec, nowSec, proof.agentId, proof.iat, proof.iat);
    const tolerance = LIMITS.dpopIatToleranceSec;
    return this.record(jti, expiresAtSec, nowSec, '', nowSec - tolerance, nowSec + tolerance) === true;
  }

  /** Synchronous, hence atomic within the process. `iatLow`/`iatHigh`: the range the proof's iat may be in. */
  private record(jti: string, expiresAt: number, now: number, agentId: string, iatLow: number, iatHigh: number): ConsumeResult {
    this.purge(now);
    const held = this.byJti.get(jti);
    if (held !== undefined) {
      if (held.expiresAt > now) return false;
      this.remove(held, now); // expired, left behind by a clock that went back: a new proof now
    }
    let agent = this.agents.get(agentId);
    const horizon = agent ?? this.forgotten;
    if (horizon.horizonUntil > now && iatLow <= horizon.horizon) return 'before_horizon';

    if (agent !== undefined) {
      while (agent.count >= this.maxEntriesPerAgent) this.evictOldest(agent, now);
    }
    while (this.byJti.size >= this.maxEntries) {
      const largest = this.counts.largest();
      if (largest === undefined) break; // unreachable: a non-empty cache has a holder
      this.evictOldest(largest, now);
    }
    agent = this.agents.get(agentId) ?? this.remember(agentId, now);

    const entry: Entry = { agent, jti, iat: iatHigh, expiresAt, live: true };
    this.byJti.set(jti, entry);
    agent.oldest.push(entry);
    this.byExpiry.push(entry);
    this.counts.increment(agent, agent.count++);
    if (agent.horizonOnly !== 0) {
      agent.horizonOnly = 0;
      this.horizonOnlyCount--;
      this.horizonOnly.sweep(this.horizonOnlyCount);
    }
    return true;
  }

  /** A record for a new agent. It inherits the forgotten agents' horizon: it may be one of them. */
  private remember(id: string, now: number): Agent {
    while (this.agents.size >= this.maxEntries) {
      // More agents than maxEntries: fold the oldest horizon-only one into the shared horizon. One
      // exists, as fewer than maxEntries proofs are held and every other agent holds one.
      const oldest = this.horizonOnly.peek();
      if (oldest === undefined) break;
      this.forget(oldest.agent, now);
    }
    const live = this.forgotten.horizonUntil > now;
    const agent: Agent = {
      id,
      count: 0,
      oldest: new Fifo<Entry>(isLive),
      horizon: live ? this.forgotten.horizon : -Infinity,
      horizonUntil: live ? this.forgotten.horizonUntil : -Infinity,
      horizonOnly: 0,
      slot: 0,
    };
    this.agents.set(id, agent);
    return agent;
  }

  /** Drops a horizon-only agent; its horizon, if live, joins the one for agents not remembered. */
  private forget(agent: Agent, now: number): void {
    this.dropHorizonOnly(agent);
    if (agent.horizonUntil <= now) return;
    const f = this.forgotten;
    const live = f.horizonUntil > now;
    this.forgotten = {
      horizon: live ? Math.max(f.horizon, agent.horizon) : agent.horizon,
      horizonUntil: live ? Math.max(f.horizonUntil, agent.horizonUntil) : agent.horizonUntil,
    };
  }

  private dropHorizonOnly(agent: Agent): void {
    agent.horizonOnly = 0;
    this.horizonOnlyCount--;
    this.agents.delete(agent.id);
    this.horizonOnly.sweep(this.horizonOnlyCount);
  }

  /** Drops the agent's oldest proof; a replay of it is then refused by the agent's raised horizon. */
  private evictOldest(agent: Agent, now: number): void {
    const entry = agent.oldest.peek();
    if (entry === undefined) return;
    if (entry.expiresAt > now) {
      const live = agent.horizonUntil > now;
      agent.horizon = live ? Math.max(agent.horizon, entry.iat) : entry.iat;
      agent.horizonUntil = live ? Math.max(agent.horizonUntil, entry.expiresAt) : entry.expiresAt;
    }
    this.remove(entry, now);
  }

  private remove(entry: Entry, now: number): void {
    const { agent } = entry;
    entry.live = false;
    this.byJti.delete(entry.jti);
    this.counts.decrement(agent, agent.count--);
    this.byExpiry.sweep(this.byJti.size);
    agent.oldest.sweep(agent.count);
    if (agent.count > 0) return;
    if (agent.horizonUntil > now) {
      agent.horizonOnly = ++this.stamp;
      this.horizonOnlyCount++;
      this.horizonOnly.push({ agent, stamp: agent.horizonOnly });
    } else {
      this.agents.delete(agent.id);
    }
  }

  /** Drops expired proofs and horizons from the old end; stops at the first live one. */
  private purge(now: number): void {
    for (let entry = this.byExpiry.peek(); entry !== undefined && entry.expiresAt <= now; entry = this.byExpiry.peek()) {
      this.remove(entry, now);
    }
    for (let h = this.horizonOnly.peek(); h !== undefined && h.agent.horizonUntil <= now; h = this.horizonOnly.peek()) {
      this.dropHorizonOnly(h.agent);
    }
  }
}
