import { Type } from '@sinclair/typebox';
import type { AuthzRequestRecord, GrantRecord } from '../../store/ports/index.ts';
import type { PendingItem } from '../../domain/approvals/pending.ts';
import { iso, isoOrNull } from '../../clock.ts';
import { IdParam, Timestamp } from './common.ts';
import { AgentApprovalDetailsOut, CategoryOut, agentApprovalOut } from './agent-approval.ts';
import { type OwnerSignIn, signInKey } from '../../domain/oidc/owner-sign-ins.ts';

/** Shapes shared by the approval, grant and /api/me routes. */

export const TxnParams = IdParam('txn_id', 't');
export const GrantParams = IdParam('grant_id', 'gr');

export const RequestKind = Type.Union([Type.Literal('initial'), Type.Literal('stepup'), Type.Literal('agent_approval'), Type.Literal('plan')]);
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
  action: Type.Optional(Type.String({ description: 'step-ups and agent approvals only: the action to approve, as the agent wrote it' })),
  filed_by: Type.Optional(Type.Literal('site', { description: 'present when the site asks (a site step-up, POST /api/v1/stepup/site) rather than the agent' })),
  app: Type.Optional(Type.Object({
    client_id: Type.String({ description: 'the app\'s OAuth client_id' }),
    client_host: Type.Union([Type.String(), Type.Null()], { description: 'the host of `client_id` when it is a URL; null for a registered client id' }),
    resource: Type.Union([Type.String(), Type.Null()], { description: 'the resource URL of the grant the request runs under; null when it names none' }),
  }, { description: 'present when the agent is a connected app (kind `app`, decisions §28). A site step-up of an app is one call of a tool: `action` is the tool, `details.summary` its arguments' })),
  details: Type.Optional(Type.Composite([AgentApprovalDetailsOut], { description: 'agent approvals: what the agent read on the page; step-ups and agent approvals bound to details (decisions §29): `summary` (shown as written) and `digest`' })),
  category: Type.Optional(CategoryOut),
  sign_in: Type.Optional(Type.Object({
    client_id: Type.String(),
    client_name: Type.String({ description: 'the name the site registered' }),
    verified: Type.Boolean({ description: 'false: the site has not proved it runs this address ("unverified site")' }),
    flow: Type.Union([Type.Literal('authorize'), Type.Literal('ciba')], { description: '`authorize`: the agent signs in at the site; `ciba`: the site asks from its server' }),
    binding_message: Type.Union([Type.String(), Type.Null()], { description: 'CIBA: what the site shows too; displayed as written' }),
  }, { description: 'present when the request is an OIDC sign-in (decisions §18)' })),
  created_at: Timestamp,
  expires_at: Timestamp,
});

export const GrantOut = Type.Object({
  id: Type.String({ description: 'grant id (`gr_`)' }),
  agent_id: Type.String(),
  agent_name: Type.String({ description: "the agent's display name" }),
  site: Type.String({ description: 'the site; for an app\'s grant, the host of `resource`' }),
  resource: Type.Union([Type.String(), Type.Null()], { description: 'a connected app\'s grant (decisions §28): the resource URL (RFC 8707) it is for, exactly as approved; its passes are refused everywhere else. Null for agents\' grants and sign-ins' }),
  scopes: Type.Array(Type.String()),
  user_info: Type.Array(Type.String()),
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'null = until revoked' }),
  uses_left: Type.Union([Type.Integer(), Type.Null()], { description: 'passes the grant may still issue; null = unlimited' }),
  created_at: Timestamp,
  sign_ins: Type.Array(Type.Object({
    client_id: Type.String(),
    client_name: Type.String(),
    created_at: Timestamp,
    expires_at: Timestamp,
  }), { description: 'live OIDC sign-ins of this agent at this site; revoking the grant ends them and tells the site (back-channel logout)' }),
});

/** `action` of a step-up request, for the answers that list requests; access requests have none. */
export const stepupAction = (r: AuthzRequestRecord): { action?: string } => (r.kind !== 'initial' && r.action !== null ? { action: r.action } : {});

export function pendingOut({ request: r, agentName, app }: PendingItem) {
  return {
    id: r.id,
    kind: r.kind,
    agent: agentName,
    agent_id: r.agentId,
    site: r.site,
    scopes: r.scopes,
    user_info: r.userInfo,
    ...stepupAction(r),
    ...(r.filedBy === 'site' ? { filed_by: 'site' as const } : {}),
    ...(app ? { app: { client_id: app.clientId, client_host: app.clientHost, resource: app.resource } } : {}),
    ...agentApprovalOut(r),
    ...(r.oidc ? { sign_in: { client_id: r.oidc.clientId, client_name: r.oidc.clientName, verified: r.oidc.verified, flow: r.oidc.flow, binding_message: r.oidc.bindingMessage } } : {}),
    created_at: iso(r.createdAt),
    expires_at: iso(r.expiresAt),
  };
}

/** `names`: agent id -> display name (domain/agents/agent-names.ts); `signIns`: domain/oidc/owner-sign-ins.ts. */
export function grantOut(g: GrantRecord, names: ReadonlyMap<string, string>, signIns: ReadonlyMap<string, OwnerSignIn[]>) {
  return {
    id: g.id,
    agent_id: g.agentId,
    agent_name: names.get(g.agentId) ?? g.agentId,
    site: g.site,
    resource: g.resource,
    scopes: g.scopes,
    user_info: g.userInfo,
    expires_at: isoOrNull(g.expiresAt),
    uses_left: g.usesLeft,
    created_at: iso(g.createdAt),
    sign_ins: (signIns.get(signInKey(g.agentId, g.site)) ?? []).map((s) => ({ client_id: s.clientId, client_name: s.clientName, created_at: iso(s.createdAt), expires_at: iso(s.expiresAt) })),
  };
}
