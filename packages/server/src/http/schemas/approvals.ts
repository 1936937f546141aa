import { Type } from '@sinclair/typebox';
import type { AuthzRequestRecord, GrantRecord } from '../../store/ports.ts';
import type { PendingItem } from '../../domain/approvals/pending.ts';
import { iso, isoOrNull } from '../../domain/clock.ts';
import { IdParam, Timestamp } from './common.ts';

/** Shapes shared by the approval, grant and /api/me routes. */

export const TxnParams = IdParam('txn_id', 't');
export const GrantParams = IdParam('grant_id', 'gr');

export const RequestKind = Type.Union([Type.Literal('initial'), Type.Literal('stepup')]);
export const RequestStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied'), Type.Literal('expired'), Type.Literal('consumed')],
  { description: '`denied` also for a request cancelled because its agent was removed or revoked' },
);

export const PendingOut = Type.Object({
  id: Type.String({ description: 'the txn id (`t_`)' }),
  kind: RequestKind,
  agent: Type.String({ description: "the agent's display name" }),
  agent_id: Type.String(),
  site: Type.String(),
  scopes: Type.Array(Type.String(), { description: 'empty for a step-up' }),
  user_info: Type.Array(Type.String()),
  action: Type.Optional(Type.String({ description: 'step-ups only: the action to approve, as the agent wrote it' })),
  created_at: Timestamp,
  expires_at: Timestamp,
});

export const GrantOut = Type.Object({
  id: Type.String({ description: 'grant id (`gr_`)' }),
  agent_id: Type.String(),
  agent_name: Type.String({ description: "the agent's display name" }),
  site: Type.String(),
  scopes: Type.Array(Type.String()),
  user_info: Type.Array(Type.String()),
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'null = until revoked' }),
  uses_left: Type.Union([Type.Integer(), Type.Null()], { description: 'passes the grant may still issue; null = unlimited' }),
  created_at: Timestamp,
});

/** `action` of a step-up request, for the answers that list requests; access requests have none. */
export const stepupAction = (r: AuthzRequestRecord): { action?: string } => (r.kind === 'stepup' && r.action !== null ? { action: r.action } : {});

export function pendingOut({ request: r, agentName }: PendingItem) {
  return {
    id: r.id,
    kind: r.kind,
    agent: agentName,
    agent_id: r.agentId,
    site: r.site,
    scopes: r.scopes,
    user_info: r.userInfo,
    ...stepupAction(r),
    created_at: iso(r.createdAt),
    expires_at: iso(r.expiresAt),
  };
}

/** `names`: agent id -> display name (domain/agents/agent-names.ts). */
export function grantOut(g: GrantRecord, names: ReadonlyMap<string, string>) {
  return {
    id: g.id,
    agent_id: g.agentId,
    agent_name: names.get(g.agentId) ?? g.agentId,
    site: g.site,
    scopes: g.scopes,
    user_info: g.userInfo,
    expires_at: isoOrNull(g.expiresAt),
    uses_left: g.usesLeft,
    created_at: iso(g.createdAt),
  };
}
