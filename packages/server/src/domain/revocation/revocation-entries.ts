import type { RevokedAgent, RevokedGrant } from '@mandate/protocol';
import type { Repos, RevokedAgentReason, RevokedAgentRow, RevokedGrantRow } from '../../store/ports/index.ts';
import { isAgentBlocked } from '../agents/blocked.ts';
import { grantAudience } from '../grants/audience.ts';
import { breathe } from './breathe.ts';
import { COURTESY_CAP, type CourtesyEntry, courtesyOf, keptCourtesy } from './revocation-bound.ts';
import { LISTED_FOR_MS } from './revocation-window.ts';

/** The lists of a snapshot, and when the first of their entries ages out (so the build must be redone). */
export interface RevocationEntries {
  revokedAgents: RevokedAgent[];
  revokedGrants: RevokedGrant[];
  /** The earliest moment after `now` at which an entry read leaves the list or changes; Infinity if none. */
  changesAt: number;
}

/**
 * Rows read per query. On SQLite a query runs on the event loop (better-sqlite3), so a list of
 * 30 000 entries read at once held it for about 300 ms; a page of this size takes a few ms, and
 * other requests run between pages.
 */
export const PAGE_ROWS = 1000;


const AGENT_REASONS: readonly RevokedAgentReason[] = ['flagged', 'blocked', 'suspended', 'removed', 'unblocked'];

/**
 * Reads the entries listed at `now` page by page: agents flagged now (by id), then removed, then
 * unblocked in the window (each by time, then id; an agent listed for two reasons where it first
 * appears), then revoked grants (by revocation time, then grant id; an agent and site revoked more
 * than once where it was first revoked in the window). That order is the same on every node, as they
 * share the database; sorting 30 000 entries, as earlier releases did, held the event loop for tens
 * of ms in one piece.
 *
 * Paging needs no read transaction (which on SQLite would hold the one connection for the whole
 * build): a row's key never changes while it is listed, so every entry recorded before the first
 * page is read exactly once; one recorded meanwhile may or may not be (the caller read the counter
 * first and makes it the list's rev_seq: snapshot.ts).
 */
export async function readEntries(repos: Pick<Repos, 'agents' | 'grants'>, now: number, counter: number, courtesyCap = COURTESY_CAP): Promise<RevocationEntries> {
  let changesAt = Infinity;
  const ageOut = (at: number | null) => {
    if (at !== null && at + LISTED_FOR_MS > now) changesAt = Math.min(changesAt, at + LISTED_FOR_MS);
  };

  const agents = new Map<string, RevokedAgent>();
  const courtesy: CourtesyEntry[] = [];
  for (const reason of AGENT_REASONS) {
    await pages<RevokedAgentRow>((after) => repos.agents.listRevoked(now, { reason, after, limit: PAGE_ROWS }), (a) => {
      ageOut(a.removedAt);
      ageOut(a.unblockedAt);
      // A block turns into a courtesy entry when its window ends, which may change what the bound keeps.
      ageOut(a.flaggedAt);
      if (agents.has(a.id)) return;
      const entry = agentEntry(a, counter, now);
      agents.set(a.id, entry);
      const c = courtesyOf(a, entry, now);
      if (c !== undefined) courtesy.push(c);
    });
  }
  // The bound across accounts (revocation-bound.ts): only courtesy entries may be dropped, and the
  // rest keep their order, which is the same on every node.
  const listedAgents = await withinBound(agents, courtesy, courtesyCap);

  const grants = new Map<string, RevokedGrant>();
  await pages<RevokedGrantRow>((after) => repos.grants.listRevoked(now, { after, limit: PAGE_ROWS }), (g) => {
    ageOut(g.revokedAt);
    addGrant(grants, g, counter);
  });
  return { revokedAgents: listedAgents, revokedGrants: [...grants.values()], changesAt };
}

/** The agents' entries in read order, without the courtesy entries the bound drops. */
async function withinBound(agents: Map<string, RevokedAgent>, courtesy: readonly CourtesyEntry[], cap: number): Promise<RevokedAgent[]> {
  if (courtesy.length <= cap) return [...agents.values()];
  const kept = await keptCourtesy(courtesy, cap);
  for (const [k, c] of courtesy.entries()) {
    if (!kept.has(c.entry.id)) agents.delete(c.entry.id);
    if (k % PAGE_ROWS === PAGE_ROWS - 1) await breathe();
  }
  return [...agents.values()];
}

/** Reads page after page (each starting after the last row of the one before) until one is short. */
async function pages<Row>(read: (after: Row | undefined) => Promise<Row[]>, each: (row: Row) => void): Promise<void> {
  let after: Row | undefined;
  for (;;) {
    const rows = await read(after);
    for (const r of rows) each(r);
    if (rows.length < PAGE_ROWS) return;
    after = rows[rows.length - 1];
    await breathe();
  }
}

/**
 * A blocked or removed agent reads `revoked` (a tombstone when removed). A missing flagRevSeq should
 * not happen; the current counter then stands in, which refuses every pass minted so far (the safe
 * side). Within the window after its block was lifted, an agent reads `revoked` at the block's
 * rev_seq (also when it is now `suspicious`, which verifiers ignore): passes minted before the block
 * stay refused, passes minted after the unblock carry a higher rev_seq and pass.
 */
function agentEntry(a: RevokedAgentRow, counter: number, now: number): RevokedAgent {
  if (isAgentBlocked(a)) return { id: a.id, flag: 'revoked', rev_seq: blockRevSeq(a) ?? counter };
  if (a.unblockedAt !== null && now - a.unblockedAt < LISTED_FOR_MS) return { id: a.id, flag: 'revoked', rev_seq: a.unblockedRevSeq ?? counter };
  return { id: a.id, flag: a.flag, rev_seq: a.flagRevSeq ?? counter };
}

/**
 * The rev_seq of a stopped agent's entry: of its removal or owner's block (flagRevSeq), or of its
 * operator's block or its connection's suspension; when both an owner's block and one of those hold,
 * the later (it refuses more).
 */
function blockRevSeq(a: RevokedAgentRow): number | null {
  const held = a.status === 'blocked' || a.status === 'suspended';
  const owner = held && a.flag !== 'revoked' ? null : a.flagRevSeq;
  const operator = a.status === 'blocked' ? a.blockedRevSeq : a.status === 'suspended' ? a.suspendedRevSeq : null;
  if (owner === null) return operator;
  return operator === null ? owner : Math.max(owner, operator);
}

/**
 * One entry per agent and audience; if several of its grants are listed, the latest revocation
 * counts. An app's grant for a protected resource is listed with `site` = its resource URL, the
 * `aud` of its passes (grants/audience.ts), so a local verifier's `revocationVerdict` refuses them
 * unchanged; its host, which another of the app's grants may share, is not listed.
 */
function addGrant(latest: Map<string, RevokedGrant>, g: RevokedGrantRow, counter: number): void {
  const site = grantAudience(g);
  // Agent ids have no space (ids.ts), so the first space ends the agent id.
  const key = `${g.agentId} ${site}`;
  const revSeq = g.revSeq ?? counter;
  const prev = latest.get(key);
  if (prev === undefined || revSeq > prev.rev_seq) latest.set(key, { agent: g.agentId, site, rev_seq: revSeq });
}
