/**
 * How many CIBA requests reach the owner (decisions §25, issue 22). Each one is a card and a push on
 * the owner's phone that a site, not the agent, asked for. Besides the client's own per-minute limit
 * and the owner's 50 open requests (fileRequest), two hourly budgets, counted in the shared store:
 * - per agent and client: one site cannot keep asking about one agent (the floor on
 *   `requested_expiry` alone still lets a denied card be asked again at once);
 * - per owner, across all sites and agents: the owner's attention, whatever asks for it.
 * Counted once the request names an agent the client may ask about, before anything is filed: a
 * request the agent already has waiting counts too, so polling bc-authorize instead of the token
 * endpoint spends the budget.
 */
import type { Clock } from '../../clock.ts';
import { QUOTAS, countHourly, quotaExceeded } from '../quotas.ts';
import type { Store } from '../../store/ports/index.ts';

export async function countCibaRequest(d: { store: Store; clock: Clock }, o: { agentId: string; userId: string; clientId: string }): Promise<void> {
  const perPair = QUOTAS.cibaRequestsPerAgentPerClientPerHour;
  await countHourly(d.store.rateCounters, d.clock, `ciba-hour:${o.clientId}:${o.agentId}`, perPair, (retryAfter) =>
    quotaExceeded('ciba_requests_per_hour', `a client may send at most ${perPair} backchannel authentication requests per hour for one agent`, retryAfter, {
      next_step: 'wait for the owner to answer the requests already sent, or retry after retry_after seconds',
    }),
  );
  const perOwner = QUOTAS.cibaRequestsPerOwnerPerHour;
  await countHourly(d.store.rateCounters, d.clock, `ciba-owner-hour:${o.userId}`, perOwner, (retryAfter) =>
    quotaExceeded('ciba_requests_per_hour', `the owner of this agent receives at most ${perOwner} backchannel authentication requests per hour, from all sites together`, retryAfter, {
      next_step: 'retry after retry_after seconds',
    }),
  );
}
