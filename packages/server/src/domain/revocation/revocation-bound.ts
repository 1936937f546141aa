import type { RevokedAgent } from '@mandate/protocol';
import type { RevokedAgentRow } from '../../store/ports/index.ts';
import { breathe } from './breathe.ts';
import { LISTED_FOR_MS } from './revocation-window.ts';

/**
 * The revocation list's bound across accounts (issue 22; decisions §25: one account can never hurt
 * another owner or a site). Every local-mode site downloads the whole list, and an account may list
 * all of its 100 live agents as blocked for good, so without a bound the list grew with sign-ups.
 *
 * The list's entries are of two kinds:
 * - entries that can still refuse a live pass: grants revoked, agents removed or unblocked, and blocks
 *   set in the last 600 s + 120 s (revocation-window.ts). These are what makes a revocation take
 *   effect at a local site at once (decisions §6) and are NEVER dropped: a cap on them would let a
 *   hostile account push another owner's fresh revocation out of the list.
 * - courtesy entries, which refuse no pass a site would accept: blocks set longer ago than the window
 *   (the passes minted before the block have expired; issuance refuses new ones, cloud verify refuses
 *   the agent), and `suspicious` flags (local verifiers never refuse on them). These are what an
 *   account can pile up for good, so they are what the bound drops.
 *
 * At most COURTESY_CAP courtesy entries are listed. When there are more, they are shared out
 * max-min fairly between owners: every owner keeps its courtesy entries up to a common level, and
 * only owners with more than that level lose entries, those with the most first. So however many
 * accounts a hostile party signs up, an owner with fewer courtesy entries than the level keeps all of
 * them, and an owner with more keeps at least as many as any hostile account. Within an owner, blocks
 * are kept before `suspicious` flags, and newer before older (an agent blocked long ago has long
 * stopped trying).
 */
export const COURTESY_CAP = 10_000;

/** A courtesy entry and what the bound orders it by. */
export interface CourtesyEntry {
  entry: RevokedAgent;
  owner: string;
  /** When its flag was set (ms). */
  at: number;
}

/**
 * The courtesy entry of an agent listed at `now`, or undefined when its entry may still refuse a live
 * pass: a block whose time is unknown counts as fresh (the safe side), and a block set after a lift
 * still in the window is kept with the lift.
 */
export function courtesyOf(row: RevokedAgentRow, entry: RevokedAgent, now: number): CourtesyEntry | undefined {
  if (row.status !== 'active' || row.flag === 'ok' || row.flaggedAt === null) return undefined;
  if (entry.flag === 'suspicious') return { entry, owner: row.userId, at: row.flaggedAt };
  const aged = (at: number | null) => at === null || now - at >= LISTED_FOR_MS;
  if (row.flag === 'revoked' && aged(row.flaggedAt) && aged(row.unblockedAt)) return { entry, owner: row.userId, at: row.flaggedAt };
  return undefined;
}

/**
 * The ids of the courtesy entries kept under `cap`: all of them when they fit; otherwise the first
 * `level` of every owner's (in keepOrder), where `level` is the highest that fits, and one more for
 * as many owners above the level as there is room left: those with the fewest entries first, then in
 * the order their first entry was read (readEntries reads them by agent id from the shared database,
 * so every node keeps the same ones).
 *
 * No step sorts all owners or all entries (a million accounts of one entry each would hold the event
 * loop for a second): owners are bucketed by their number of entries, of which there are few distinct
 * ones (an owner has at most 100 live agents), and only the lists of owners above the level are
 * sorted, each on its own, STEP entries between two turns of the event loop.
 */
export async function keptCourtesy(entries: readonly CourtesyEntry[], cap: number): Promise<Set<string>> {
  if (entries.length <= cap) return new Set(entries.map((c) => c.entry.id));
  const byOwner = new Map<string, CourtesyEntry[]>();
  for (const [k, c] of entries.entries()) {
    const list = byOwner.get(c.owner);
    if (list === undefined) byOwner.set(c.owner, [c]);
    else list.push(c);
    if (k % STEP === STEP - 1) await breathe();
  }
  const byCount = new Map<number, CourtesyEntry[][]>();
  for (const list of byOwner.values()) {
    const bucket = byCount.get(list.length);
    if (bucket === undefined) byCount.set(list.length, [list]);
    else bucket.push(list);
  }
  const counts = [...byCount.keys()].sort((a, b) => a - b);

  // Water-filling: raise a common level while all owners above it can have it; those at or below
  // it keep everything.
  let room = cap;
  let level = 0;
  let above = byOwner.size;
  let j = 0;
  for (; j < counts.length; j++) {
    const count = counts[j] ?? 0;
    if ((count - level) * above > room) break;
    room -= (count - level) * above;
    level = count;
    above -= byCount.get(count)?.length ?? 0;
  }
  if (above > 0) {
    const raise = Math.floor(room / above);
    level += raise;
    room -= raise * above;
  }

  const kept = new Set<string>();
  let sorted = 0;
  for (const [k, count] of counts.entries()) {
    for (const list of byCount.get(count) ?? []) {
      if (k < j) {
        for (const c of list) kept.add(c.entry.id);
        continue;
      }
      // Above the level: the smallest owners, in read order, take the room left, one entry each.
      const take = level + (room > 0 ? 1 : 0);
      if (room > 0) room--;
      for (const c of list.sort(keepOrder).slice(0, take)) kept.add(c.entry.id);
      sorted += list.length;
      if (sorted >= STEP) {
        sorted = 0;
        await breathe();
      }
    }
  }
  return kept;
}

/** Courtesy entries grouped or sorted between two turns of the event loop. */
const STEP = 5_000;

/** Within one owner: blocks before `suspicious` flags, then newest first, then by id. */
function keepOrder(a: CourtesyEntry, b: CourtesyEntry): number {
  const rank = (c: CourtesyEntry) => (c.entry.flag === 'suspicious' ? 1 : 0);
  return rank(a) - rank(b) || b.at - a.at || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0);
}
