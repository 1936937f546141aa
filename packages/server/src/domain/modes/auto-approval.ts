import type { AgentApprovalDetails, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import type { ApprovalCategory } from './category.ts';
import { DEFAULT_PAUSE_SCOPE, DENIAL_PAUSE_MS, decideMode, denialPauses, lookupMode } from './mode-rules.ts';

const HOUR_MS = 3600_000;

/** Why an agent approval was approved at once, or null: it asks the owner (a card). */
export interface AutoApproval {
  reason: string;
  /** The mode row that approved (a host or `*`). */
  modeSite: string | null;
}

/**
 * The approval mode's decision at filing time (decisions §19), reading the agent's rows, its recent
 * denials and its hourly count. The count is taken last and atomically (a fixed hourly window per
 * agent and mode row), only for a request the rules would approve, so racing requests never pass the
 * limit together.
 */
export async function modeDecision(d: { store: Store; clock: Clock }, agentId: string, site: string, category: ApprovalCategory, details: AgentApprovalDetails): Promise<AutoApproval | null> {
  const match = lookupMode(await d.store.approvalModes.list(agentId), site);
  if (match.mode === 'ask') return null;
  const now = d.clock.now();
  let recentlyDenied = false;
  if (match.mode === 'smart') {
    const scope = (await d.store.approvalModes.pauseScope(agentId)) ?? DEFAULT_PAUSE_SCOPE;
    const denied = await d.store.authzRequests.decidedSince(agentId, 'agent_approval', 'denied', now - DENIAL_PAUSE_MS);
    recentlyDenied = denied.some((r) => (r.decidedAt ?? 0) + DENIAL_PAUSE_MS > now && denialPauses(r.site, site, scope));
  }
  const decision = decideMode({ match, category, site, details, recentlyDenied, autoApprovedThisHour: 0 });
  if (!decision.approve) return null;
  const { count } = await d.store.rateCounters.hit(`auto-approvals:${agentId}:${match.site ?? '*'}`, HOUR_MS, now);
  if (count > match.hourlyLimit) return null;
  return { reason: decision.reason, modeSite: match.site };
}
