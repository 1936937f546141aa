import type { RawSql } from './stores.ts';

/**
 * What the scale runs' activity filters look for (issue 14, item 6). `seedActivity` writes records of
 * 100 agents in turns, all for one site, with three actions in turns; this gives them a spread the
 * filters can tell apart, as in a real trail:
 * - the first agent's records (1 in 100) are all for AGENT_SITE, which no other agent visits, so
 *   "that agent + the common site" matches nothing although both match plenty alone;
 * - one record in RARE_EVERY (the owner's number ending in 00050) is an `agent.note` for RARE_SITE.
 */
export const AGENT_SITE = 'agent-site.example';
export const RARE_SITE = 'rare.example';
export const RARE_ACTION = 'agent.note';
export const RARE_EVERY = 100_000;
/** One of the three actions `seedActivity` writes in turns (1 record in 3). */
export const COMMON_ACTION = 'stepup.used';

/**
 * Spreads the records `seedActivity` just added (the owner's `added` newest) as described above.
 * Two UPDATEs over index ranges: the agent's records, and the chunk's numbers for the rare ones.
 */
export async function spreadActivityFilters(raw: RawSql, o: { userId: string; filterAgent: string; added: number }): Promise<void> {
  if (o.added <= 0) return;
  const newest = Number(await raw.scalar(`SELECT MAX(owner_seq) FROM activity WHERE user_id = '${o.userId}'`));
  const lo = newest - o.added;
  await raw.exec(`UPDATE activity SET site = '${AGENT_SITE}' WHERE user_id = '${o.userId}' AND agent_id = '${o.filterAgent}' AND owner_seq > ${lo}`);
  await raw.exec(`UPDATE activity SET site = '${RARE_SITE}', action = '${RARE_ACTION}' WHERE user_id = '${o.userId}' AND owner_seq > ${lo} AND owner_seq % ${RARE_EVERY} = 50`);
}
