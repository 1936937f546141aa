/**
 * The admin switch (decisions §17): off blocks every live agent the operator created, on unblocks
 * exactly those an off blocked, then suspends again those beyond their connection's limit. Each switch advances `rev_seq` in the same transaction as the rows it
 * changes, like an owner's flag change (agents/agents.ts), so every node's revocation snapshot moves
 * with it: cloud verify, the snapshot, agent status and OIDC sign-ins read `blocked` through
 * isAgentBlocked. Grants stay as they were; after on, passes minted before the off stay refused
 * (the lift is listed at the block's rev_seq for one pass lifetime) and new passes work at once.
 */
import type { Clock } from '../../clock.ts';
import type { OperatorRecord, OperatorStatus, Store } from '../../store/ports/index.ts';
import { conflict, notFound } from '../errors.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';

export interface SwitchOutcome {
  operator: OperatorRecord;
  /** The status changed (false when it already was what was asked). */
  changed: boolean;
  /** The agents this switch blocked (off) or unblocked (on). */
  agentIds: string[];
}

/** On from `pending` or `disabled`; off from `pending` (an admin turning a registration down) or `active`. */
const FROM: Record<'on' | 'off', readonly OperatorStatus[]> = { on: ['pending', 'disabled'], off: ['pending', 'active'] };

export async function switchOperator(store: Store, clock: Clock, operatorId: string, enabled: boolean): Promise<SwitchOutcome> {
  const outcome = await store.transaction(async (repos) => {
    const current = await repos.operators.byId(operatorId);
    if (!current) throw notFound('operator not found');
    if (enabled && current.verifiedAt === null) {
      throw conflict('the operator\'s domain is not verified: its owner must publish the verification line and call POST /api/operators/{oid}/verify first');
    }
    const to: OperatorStatus = enabled ? 'active' : 'disabled';
    const now = clock.now();
    if (!(await repos.operators.switchStatus(current.id, FROM[enabled ? 'on' : 'off'], to, now))) return { changed: false, agentIds: [] };
    const revSeq = await new RevocationSequence(repos.counters).advance();
    if (!enabled) return { changed: true, agentIds: await repos.operators.blockAgents(current.id, revSeq, now) };
    const agentIds = await repos.operators.unblockAgents(current.id, now);
    // The off dropped suspensions; the people's connection limits hold again: beyond them, suspended.
    await repos.connections.suspendBeyond({ operatorId: current.id }, revSeq, now);
    return { changed: true, agentIds };
  });
  const operator = await store.operators.byId(operatorId);
  if (!operator) throw notFound('operator not found');
  return { operator, ...outcome };
}
