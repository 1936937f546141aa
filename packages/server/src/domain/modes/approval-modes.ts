import type { ApprovalMode, PauseScope, Store } from '../../store/ports/index.ts';
import type { Agents } from '../agents/agents.ts';
import type { Activity } from '../activity/activity.ts';
import { badRequest } from '../errors.ts';
import { siteProblem } from '../approvals/request-rules.ts';
import { DEFAULT_HOURLY_LIMIT, DEFAULT_MODE, DEFAULT_PAUSE_SCOPE, HOURLY_LIMIT_MAX, HOURLY_LIMIT_MIN } from './mode-rules.ts';

/** GET/POST /api/agents/{agent_id}/approval-modes (decisions §19): the owner's side of approval modes. */

export interface ApprovalModesView {
  default: { mode: ApprovalMode; hourly_limit: number };
  sites: Record<string, { mode: ApprovalMode; hourly_limit: number }>;
  pause_scope: PauseScope;
}

/** ApprovalModeIn as the route lets it through. */
export interface ApprovalModeIn {
  site: string;
  mode: 'ask' | 'smart' | 'allow' | 'off' | null;
  hourly_limit?: number | undefined;
  pause_scope?: PauseScope | undefined;
}

export interface ModesDeps {
  store: Store;
  agents: Agents;
  activity: Activity;
}

/** The agent's modes; 404 for an agent that is not the owner's (or removed). */
export async function getApprovalModes(d: ModesDeps, userId: string, agentId: string): Promise<ApprovalModesView> {
  await d.agents.owned(userId, agentId);
  return view(d.store, agentId);
}

async function view(store: Store, agentId: string): Promise<ApprovalModesView> {
  const rows = await store.approvalModes.list(agentId);
  const star = rows.find((r) => r.site === '*');
  const sites: ApprovalModesView['sites'] = {};
  for (const r of rows) if (r.site !== '*') sites[r.site] = { mode: r.mode, hourly_limit: r.hourlyLimit };
  return {
    default: star ? { mode: star.mode, hourly_limit: star.hourlyLimit } : { mode: DEFAULT_MODE, hourly_limit: DEFAULT_HOURLY_LIMIT },
    sites,
    pause_scope: (await store.approvalModes.pauseScope(agentId)) ?? DEFAULT_PAUSE_SCOPE,
  };
}

/**
 * Sets (or with `mode: null` removes) one row: `site` a host name or `*`; `"off"` is read as
 * `"allow"`; `allow` only for one site, never as the default; `hourly_limit` 1-200 (default 20).
 * `pause_scope`, when sent, is the agent's (it applies to all its sites). Answers the new view.
 */
export async function setApprovalMode(d: ModesDeps, userId: string, agentId: string, input: ApprovalModeIn, ip: string | null = null): Promise<ApprovalModesView> {
  const agent = await d.agents.owned(userId, agentId);
  const site = input.site.trim().toLowerCase();
  if (site !== '*' && siteProblem(site) !== null) throw badRequest('invalid site: a host name (for example shop.example.com) or "*" for the default');
  const mode: ApprovalMode | null = input.mode === 'off' ? 'allow' : input.mode;
  if (mode === 'allow' && site === '*') throw badRequest('mode allow is only for one site: choose "ask" or "smart" as the default', { next_step: 'set allow on the site it is meant for' });
  const hourlyLimit = input.hourly_limit ?? DEFAULT_HOURLY_LIMIT;
  if (!Number.isInteger(hourlyLimit) || hourlyLimit < HOURLY_LIMIT_MIN || hourlyLimit > HOURLY_LIMIT_MAX) throw badRequest(`hourly_limit must be a whole number from ${HOURLY_LIMIT_MIN} to ${HOURLY_LIMIT_MAX}`);

  await d.store.transaction(async (repos) => {
    if (mode === null) await repos.approvalModes.remove(agentId, site);
    else await repos.approvalModes.put({ agentId, site, mode, hourlyLimit });
    if (input.pause_scope !== undefined) await repos.approvalModes.setPauseScope(agentId, input.pause_scope);
    await d.activity.record({ userId, action: 'approval_mode.changed', agentId: agent.id, site: site === '*' ? null : site, detail: { site, mode, hourly_limit: mode === null ? null : hourlyLimit, ...(input.pause_scope ? { pause_scope: input.pause_scope } : {}) }, ip }, repos.activity);
  });
  return view(d.store, agentId);
}
