import { LIMITS } from '@mandate/protocol';

/**
 * Clock difference allowed for between the service's nodes (which write revocation times and mint
 * passes) and the sites that check a pass's `exp` (decisions §25).
 */
export const CLOCK_SKEW_SEC = 120;

/**
 * How long an entry stays on the revocation list after the revocation, removal or unblock it records
 * (decisions §25: 600 s + 120 s).
 *
 * Why that is enough: an entry refuses passes whose rev_seq is at or below its own. Such a pass read
 * the counter before the revocation advanced it, and issuance refuses a revoked grant or a blocked
 * or removed agent, so the pass was minted before the revocation took effect, and it expires at most
 * the pass lifetime (600 s) after it was minted: before the revocation time + 600 s. The 120 s cover
 * clocks that disagree (the node that minted against the node that revoked, and the site that
 * checks `exp` with no leeway of its own). After that the entry refuses nothing a site would accept,
 * and leaving it out changes no verdict. The list's rev_seq still only grows.
 *
 * A lifted block counts from the unblock (later than the block, so the old passes have had longer);
 * an agent that stays blocked keeps its entry for as long as it is blocked, and its new passes are
 * refused at issuance. Once its block is older than this window, that entry refuses no live pass: it is
 * a courtesy entry, which the list's bound across accounts may drop (revocation-bound.ts).
 */
export const LISTED_FOR_MS = (LIMITS.passLifetimeSec + CLOCK_SKEW_SEC) * 1000;

/** Entries recorded after this moment are listed at `now`; those at or before it have aged out. */
export const listedSince = (now: number): number => now - LISTED_FOR_MS;
