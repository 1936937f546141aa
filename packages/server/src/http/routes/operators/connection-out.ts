import { Type } from '@sinclair/typebox';
import { iso } from '../../../clock.ts';
import type { ConnectionAgent } from '../../../store/ports/index.ts';
import { type OwnerConnectionView, shownStatus } from '../../../domain/operators/connection-lifecycle.ts';
import { Timestamp } from '../../schemas/common.ts';

/** The statuses of a connection and of an operator's agent (interface "States and transitions"). */
export const ConnectionStatusOut = (description: string) =>
  Type.Union([Type.Literal('active'), Type.Literal('removed'), Type.Literal('blocked'), Type.Literal('suspended')], { description });

export const AGENT_STATUS_TEXT = '`active`; `removed` (by the person, by the operator, or with its connection); `blocked` while its operator is switched off by an admin; `suspended` while the person\'s limit for the connection is lower than its agents (the newest beyond it; lifted when the limit rises)';

/** One agent of a connection, as the person sees it in their connection list. */
const OwnerConnectionAgent = Type.Object({
  id: Type.String({ description: 'agent id (`ag_`)' }),
  name: Type.String({ description: 'the name the operator gave, followed by "(via <operator>)"' }),
  status: ConnectionStatusOut(AGENT_STATUS_TEXT),
  created_at: Timestamp,
});

/** A connection as the person sees it (GET /api/connections and the limit's answer). */
export const OwnerConnectionOut = Type.Object({
  id: Type.String({ description: 'connection id (`cn_`)' }),
  operator: Type.Object({
    id: Type.String({ description: 'operator id (`op_`)' }),
    name: Type.String(),
    domain: Type.String({ description: 'host[:port] of its redirect URIs (verified by the service)' }),
  }, { description: 'the operator; name and domain are empty when its registrant deleted their account' }),
  status: ConnectionStatusOut('`active`; `removed` once ended (by you, by the operator, or because its one-time code was used twice); `blocked` while an admin has switched the operator off'),
  max_agents: Type.Integer({ description: 'how many agents the operator may have for you (0 to 50)' }),
  agents: Type.Array(OwnerConnectionAgent, { description: 'the agents the operator made through this connection, oldest first, removed ones too' }),
  created_at: Timestamp,
});

const agentOut = (a: ConnectionAgent) => ({ id: a.id, name: a.name, status: a.status, created_at: iso(a.createdAt) });

export const ownerConnectionOut = ({ connection: c, operator, agents }: OwnerConnectionView) => ({
  id: c.id,
  operator: { id: c.operatorId, name: operator?.name ?? '', domain: operator?.domain ?? '' },
  status: shownStatus(c, operator),
  max_agents: c.maxAgents,
  agents: agents.map(agentOut),
  created_at: iso(c.createdAt),
});
