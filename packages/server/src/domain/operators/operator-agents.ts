/**
 * The operator API's agents and connections (decisions §17), for an authenticated operator: it
 * creates agents for the people who connected it, within each connection's `max_agents`, lists and
 * removes only its own, and ends its connections. It never reads a person's email, phone, other
 * agents, grants, approvals or activity: every read here is of its own connections and agents.
 * No HTTP, no SQL.
 */
import type { ConnectionAgent, ConnectionRecord, OperatorRecord, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import { AGENT_NAME_MAX, type Agents } from '../agents/agents.ts';
import { badRequest, forbidden, notFound } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import type { ConnectionLifecycle } from './connection-lifecycle.ts';

/** An operator's lists are capped at this many rows (connections newest first, agents oldest first). */
export const OPERATOR_LIST_CAP = 1000;

export interface OperatorAgentsDeps {
  store: Store;
  activity: Activity;
  agents: Pick<Agents, 'create' | 'removeWithin'>;
  lifecycle: Pick<ConnectionLifecycle, 'end'>;
}

export interface OperatorConnectionView {
  connection: ConnectionRecord;
  /** Its live (not removed) agents. */
  agents: number;
}

/** The same answer for an unknown id and another operator's connection: ids cannot be probed. */
const NOT_YOURS = 'connection_id is not a connection of this operator: use the connection_id POST /api/v1/operator/token answered';
const AGENT_NOT_FOUND = 'agent not found';

/** The agent's name as the person sees it: the given name, then which operator made it. */
export const viaName = (name: string, operator: Pick<OperatorRecord, 'name'>): string => `${name.trim()} (via ${operator.name})`;

export class OperatorAgents {
  constructor(private readonly d: OperatorAgentsDeps) {}

  /**
   * An agent for the person of `connectionId`, owned by them and tied to this operator. 403 unless
   * the connection is this operator's and live, or when its live agents already reach `max_agents`:
   * both checked under the owner's quota lock in the creation's transaction (with the owner's own
   * limit), so racing creations on any number of nodes never pass the limit. The owner is told on
   * their devices and in the inbox, and the trail records it.
   */
  async create(operator: OperatorRecord, input: { connectionId: string; name: string; jwk: unknown }, ip: string | null): Promise<ConnectionAgent> {
    const given = await this.connection(operator, input.connectionId, forbidden);
    const name = viaName(input.name, operator);
    if (input.name.trim() === '' || name.length > AGENT_NAME_MAX) {
      throw badRequest(`name must be 1 to ${AGENT_NAME_MAX - viaName('', operator).length} characters: the person sees it followed by " (via ${operator.name})", ${AGENT_NAME_MAX} characters at most in all`);
    }
    const link = { operatorId: operator.id, connectionId: given.id, browser: operator.browser };
    const agent = await this.d.agents.create(given.userId, { name, jwk: input.jwk }, ip, {
      within: async (repos) => {
        const c = await repos.connections.byId(given.id);
        if (!c || c.status !== 'active') throw forbidden('this connection has ended: the person must connect your operator again (a new connection_id)');
        const live = await repos.connections.liveAgents(c.id);
        if (live >= c.maxAgents) throw forbidden(`agent limit of this connection reached (${c.maxAgents}; the person sets it): remove one of its agents first, or ask the person to raise the limit`, { max_agents: c.maxAgents, agents: live });
      },
      after: (repos, created) => repos.operators.attachAgent(created.id, link),
      how: `by ${operator.name}, an operator you connected`,
      detail: { operator_id: operator.id, operator: operator.name, connection_id: given.id },
    });
    return { id: agent.id, name: agent.name, status: agent.status, browser: operator.browser, operatorId: operator.id, connectionId: given.id, createdAt: agent.createdAt };
  }

  /** This operator's agents (never another's), oldest first; with a connection id, that connection's (404 when not its). */
  async list(operator: OperatorRecord, connectionId: string | null): Promise<ConnectionAgent[]> {
    if (connectionId !== null) await this.connection(operator, connectionId, notFound, true);
    return this.d.store.connections.operatorAgents(operator.id, connectionId, OPERATOR_LIST_CAP);
  }

  /** Removes one of its agents as an owner's removal does; another's, an unknown or a removed one: 404. */
  async remove(operator: OperatorRecord, agentId: string, ip: string | null): Promise<void> {
    const agent = looksLikeId('ag', agentId) ? await this.d.store.agents.byId(agentId) : undefined;
    const own = agent && (await this.d.store.operators.agentOperatorsOfOwner(agent.userId)).get(agent.id);
    if (!agent || agent.status === 'removed' || own?.operatorId !== operator.id) throw notFound(AGENT_NOT_FOUND);
    const removed = await this.d.store.transaction((repos) => this.d.agents.removeWithin(repos, agent.id));
    if (!removed) throw notFound(AGENT_NOT_FOUND);
    await this.d.activity.record({ userId: agent.userId, action: 'agent.removed', agentId: agent.id, detail: { by: 'operator', operator_id: operator.id, operator: operator.name, connection_id: own.connectionId }, ip });
  }

  /** Its connections, ended ones too, newest first, with how many live agents each has. */
  async connections(operator: OperatorRecord): Promise<OperatorConnectionView[]> {
    const connections = await this.d.store.connections.listForOperator(operator.id, OPERATOR_LIST_CAP);
    const agents = await this.d.store.connections.agentsOf(connections.map((c) => c.id));
    return connections.map((connection) => ({ connection, agents: agents.filter((a) => a.connectionId === connection.id && a.status !== 'removed').length }));
  }

  /** Ends one of its connections (its agents removed); an ended one answers as done; another's: 404. */
  async endConnection(operator: OperatorRecord, connectionId: string, ip: string | null): Promise<ConnectionRecord> {
    const c = await this.connection(operator, connectionId, notFound, true);
    await this.d.lifecycle.end(c, 'operator_ended', ip, operator);
    return (await this.d.store.connections.byId(c.id)) ?? c;
  }

  /** The operator's connection: live unless `endedToo`; else `refuse` (the same answer for others' and unknown ids). */
  private async connection(operator: OperatorRecord, connectionId: string, refuse: (detail: string) => Error, endedToo = false): Promise<ConnectionRecord> {
    const c = looksLikeId('cn', connectionId) ? await this.d.store.connections.byId(connectionId) : undefined;
    if (!c || c.operatorId !== operator.id) throw refuse(NOT_YOURS);
    if (!endedToo && c.status !== 'active') throw refuse('this connection has ended: the person must connect your operator again (a new connection_id)');
    return c;
  }
}
