/**
 * A connection's life after the consent (decisions §17, interface "States and transitions"): the
 * person's list, the agent limit (suspending the newest agents beyond it, lifting them oldest first
 * when it rises), and the end, by the person, by the operator or by a reused code. Ending removes
 * every agent of the connection in ONE transaction with the end, each as an owner's removal does
 * (Agents.removeWithin: site access revoked at a new rev_seq, open requests cancelled, OIDC sign-ins
 * ended with back-channel logouts queued). An ended connection stays ended. No HTTP, no SQL.
 */
import type { Clock } from '../../clock.ts';
import type { ConnectionAgent, ConnectionRecord, OperatorRecord, Repos, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Agents } from '../agents/agents.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';

/** What the person may set a connection's limit to (decisions §17: `max_agents` 0-50). */
export const MAX_AGENTS_RANGE = { min: 0, max: 50 } as const;
/** The person's list shows at most this many connections, newest first. */
export const OWNER_CONNECTIONS_CAP = 100;

/** Why a connection ended, as its activity record says. */
export type EndReason = 'owner_disconnected' | 'operator_ended' | 'code_reused';

/** A connection with its operator and agents, as the person sees it. */
export interface OwnerConnectionView {
  connection: ConnectionRecord;
  /** Undefined when the operator is gone (its registrant deleted their account). */
  operator: OperatorRecord | undefined;
  agents: ConnectionAgent[];
}

export interface ConnectionLifecycleDeps {
  store: Store;
  clock: Clock;
  activity: Activity;
  agents: Pick<Agents, 'removeWithin'>;
}

const NOT_FOUND = 'connection not found';

/**
 * The status a connection shows: `removed` once ended; `blocked` while its operator is switched
 * off (its agents are blocked); else `active`.
 */
export function shownStatus(c: ConnectionRecord, operator: Pick<OperatorRecord, 'status'> | undefined): ConnectionRecord['status'] {
  if (c.status !== 'active') return c.status;
  return operator === undefined || operator.status === 'active' ? 'active' : 'blocked';
}

export class ConnectionLifecycle {
  constructor(private readonly d: ConnectionLifecycleDeps) {}

  /** The person's connections, ended ones too, newest first, each with its operator and agents. */
  async listForOwner(userId: string): Promise<OwnerConnectionView[]> {
    const connections = await this.d.store.connections.listForUser(userId, OWNER_CONNECTIONS_CAP);
    return this.views(connections);
  }

  /** The person's connection, or 404 (also for another person's: ids cannot be probed). */
  async owned(userId: string, connectionId: string): Promise<ConnectionRecord> {
    const c = looksLikeId('cn', connectionId) ? await this.d.store.connections.byId(connectionId) : undefined;
    if (!c || c.userId !== userId) throw notFound(NOT_FOUND);
    return c;
  }

  /** The person ends a connection; an ended one stays ended (and this answers as done). */
  async disconnect(userId: string, connectionId: string, ip: string | null): Promise<void> {
    const c = await this.owned(userId, connectionId);
    await this.end(c, 'owner_disconnected', ip);
  }

  /**
   * Sets the agent limit of the person's live connection (0-50). Lower than its live agents: the
   * newest beyond it are suspended; higher: suspended ones are lifted, oldest first, up to it. Both in
   * one transaction under the owner's lock (so a racing operator creation counts what this wrote),
   * advancing `rev_seq` when an agent changed. 409 for an ended connection.
   */
  async setLimit(userId: string, connectionId: string, maxAgents: number, ip: string | null): Promise<OwnerConnectionView> {
    if (!Number.isInteger(maxAgents) || maxAgents < MAX_AGENTS_RANGE.min || maxAgents > MAX_AGENTS_RANGE.max) {
      throw badRequest(`max_agents must be a whole number from ${MAX_AGENTS_RANGE.min} to ${MAX_AGENTS_RANGE.max}`);
    }
    const c = await this.owned(userId, connectionId);
    const now = this.d.clock.now();
    const changed = await this.d.store.transaction(async (repos) => {
      await repos.quotas.lockOwner(userId);
      if (!(await repos.connections.setMaxAgents(c.id, maxAgents))) return undefined;
      const lifted = await repos.connections.liftWithin(c.id, now);
      const over = (await repos.connections.liveAgents(c.id)) > maxAgents;
      if (lifted.length === 0 && !over) return { lifted, suspended: [] };
      // A suspension is listed at the rev_seq it takes; a lift advances it too, so that passes
      // minted after the lift carry a higher rev_seq than the one the lifted entry refuses.
      const revSeq = await new RevocationSequence(repos.counters).advance();
      const suspended = over ? await repos.connections.suspendBeyond({ connectionId: c.id }, revSeq, now) : [];
      return { lifted, suspended };
    });
    if (changed === undefined) throw conflict('this connection has ended; connecting the operator again makes a new one');
    await this.d.activity.record({ userId, action: 'operator.connection_limit', detail: { connection_id: c.id, operator_id: c.operatorId, max_agents: maxAgents, suspended: changed.suspended, lifted: changed.lifted }, ip });
    const [view] = await this.views([(await this.d.store.connections.byId(c.id)) as ConnectionRecord]);
    return view as OwnerConnectionView;
  }

  /**
   * Ends `c` and removes its live agents, in ONE transaction under the owner's lock: a creation
   * racing this either committed first (and is removed here) or finds the connection ended. Answers
   * false when it had already ended (nothing is done). Records the end and each removal.
   */
  async end(c: ConnectionRecord, reason: EndReason, ip: string | null, operator?: Pick<OperatorRecord, 'id' | 'name'>): Promise<boolean> {
    const removed = await this.d.store.transaction((repos) => this.endWithin(repos, c));
    if (removed === undefined) return false;
    const op = operator ?? (await this.d.store.operators.byId(c.operatorId));
    await this.d.activity.record({ userId: c.userId, action: 'operator.connection_ended', detail: { operator_id: c.operatorId, name: op?.name ?? null, connection_id: c.id, reason, agents: removed.length }, ip });
    for (const agentId of removed) {
      await this.d.activity.record({ userId: c.userId, action: 'agent.removed', agentId, detail: { connection_id: c.id, operator_id: c.operatorId, reason }, ip });
    }
    return true;
  }

  private async endWithin(repos: Repos, c: ConnectionRecord): Promise<string[] | undefined> {
    await repos.quotas.lockOwner(c.userId);
    if (!(await repos.connections.end(c.id, this.d.clock.now()))) return undefined;
    const removed: string[] = [];
    for (const agent of await repos.connections.agentsOf([c.id])) {
      if (agent.status !== 'removed' && (await this.d.agents.removeWithin(repos, agent.id))) removed.push(agent.id);
    }
    return removed;
  }

  private async views(connections: readonly ConnectionRecord[]): Promise<OwnerConnectionView[]> {
    const agents = await this.d.store.connections.agentsOf(connections.map((c) => c.id));
    const operators = new Map<string, OperatorRecord | undefined>();
    for (const id of new Set(connections.map((c) => c.operatorId))) operators.set(id, await this.d.store.operators.byId(id));
    return connections.map((connection) => ({ connection, operator: operators.get(connection.operatorId), agents: agents.filter((a) => a.connectionId === connection.id) }));
  }
}
