import type pg from 'pg';
import type { Selectable } from 'kysely';
import type { PassIssuanceBatch, PassIssuanceOutcome } from '../ports/index.ts';
import type { GrantsTable } from '../schema.ts';
import { grantFromRow } from '../repos/grants.ts';
import { ownerSeqCounter } from '../repos/activity.ts';
import { REV_SEQ_COUNTER } from '../repos/pass-issuance.ts';

/**
 * A batch of pass issuances in ONE statement (one round trip, one commit, one WAL flush), the
 * statements of repos/pass-issuance.ts as data-modifying CTEs over the batch's arrays (one text
 * whatever the batch size: a named statement, planned once per connection):
 *
 * - `rate`: each item's rate counter (+1; the batch holds each key once, pass-issuance-batching.ts);
 * - `spent`: the compare-and-set of each item within its limit (the batch holds each grant once);
 * - `owners`: each owner's activity counter, + the owner's passes of the batch (one row lock per
 *   owner per batch instead of one per pass), numbering the records without gaps;
 * - `recorded`: the `pass.issued` records, detail + `uses_left` of the updated grant;
 * - the answer: one row per item, with `rev_seq` as this statement reads it.
 *
 * Rows of every table are taken in key order (the inputs sorted), and in one order of tables, so
 * statements of several nodes do not deadlock one another in the usual case; if PostgreSQL still
 * finds a deadlock it cancels one statement (nothing of it is written) and that one is sent again.
 * An issuance never waits for a row another issuance holds beyond that one's commit.
 */
const ISSUE_PASSES: pg.QueryConfig = {
  name: 'mandate_pass_issuance',
  text: `WITH items AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::bigint[], $4::bigint[], $5::int[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[])
    AS i(ord, rate_key, window_start, reset_at, rate_limit, grant_id, now, new_hash, expected_hash, detail, ip, created_at)
),
rate AS (
  INSERT INTO rate_counters AS rc (key, window_start, count, expires_at)
  SELECT rate_key, window_start, 1, reset_at FROM items ORDER BY rate_key
  ON CONFLICT (key, window_start) DO UPDATE SET count = rc.count + 1
  RETURNING key, count
),
spent AS (
  UPDATE grants g SET refresh_hash = i.new_hash, passes_issued = g.passes_issued + 1,
    uses_left = CASE WHEN g.uses_left IS NULL THEN NULL ELSE g.uses_left - 1 END
  FROM items i JOIN rate r ON r.key = i.rate_key AND r.count <= i.rate_limit
  WHERE g.id = i.grant_id AND g.status = 'active' AND (g.expires_at IS NULL OR g.expires_at > i.now)
    AND (g.uses_left IS NULL OR g.uses_left > 0) AND (i.expected_hash IS NULL OR g.refresh_hash = i.expected_hash)
  RETURNING i.ord, i.detail, i.ip, i.created_at AS recorded_at, g.*
),
owners AS (
  INSERT INTO counters AS c (name, value)
  SELECT $13::text || user_id, count(*) FROM spent GROUP BY user_id ORDER BY 1
  ON CONFLICT (name) DO UPDATE SET value = c.value + excluded.value
  RETURNING name, value
),
recorded AS (
  INSERT INTO activity (user_id, owner_seq, agent_id, site, action, detail, ip, created_at)
  SELECT s.user_id, o.value - count(*) OVER per_owner + row_number() OVER (per_owner ORDER BY s.ord), s.agent_id, s.site, 'pass.issued',
    (s.detail::jsonb || jsonb_build_object('uses_left', s.uses_left))::text, s.ip, s.recorded_at
  FROM spent s JOIN owners o ON o.name = $13::text || s.user_id
  WINDOW per_owner AS (PARTITION BY s.user_id)
)
SELECT i.ord, r.count AS rate_count, i.reset_at, i.rate_limit, (SELECT value FROM counters WHERE name = $14::text) AS rev_seq,
  s.id, s.user_id, s.agent_id, s.site, s.scopes, s.user_info, s.status, s.created_at, s.expires_at, s.uses_left,
  s.refresh_hash, s.passes_issued, s.revoked_at, s.rev_seq AS grant_rev_seq, s.superseded_at, s.resource
FROM items i JOIN rate r ON r.key = i.rate_key LEFT JOIN spent s ON s.ord = i.ord`,
};

type AnswerRow = Omit<Selectable<GrantsTable>, 'id' | 'rev_seq'> & {
  ord: number;
  rate_count: number;
  reset_at: number;
  rate_limit: number;
  rev_seq: number | null;
  id: string | null;
  grant_rev_seq: number | null;
};

/** PostgreSQL's "deadlock detected": the statement was cancelled and wrote nothing. */
export const DEADLOCK = '40P01';
export const ATTEMPTS = 3;

export function postgresPassIssuance(pool: pg.Pool): PassIssuanceBatch {
  return async (batch) => {
    if (batch.length === 0) return [];
    // Sorted by rate key, then grant (ord keeps each answer's place): rows locked in one order.
    const order = batch.map((_, i) => i).sort((a, b) => compare(batch[a]?.rate.key, batch[b]?.rate.key) || compare(batch[a]?.grantId, batch[b]?.grantId));
    const items = order.map((i) => {
      const q = batch[i];
      if (q === undefined) throw new Error('pass issuance: a hole in the batch');
      const windowStart = q.now - (q.now % q.rate.windowMs);
      return { ord: i, q, windowStart, resetAt: windowStart + q.rate.windowMs };
    });
    const values = [
      items.map((x) => x.ord),
      items.map((x) => x.q.rate.key),
      items.map((x) => x.windowStart),
      items.map((x) => x.resetAt),
      items.map((x) => x.q.rate.limit),
      items.map((x) => x.q.grantId),
      items.map((x) => x.q.now),
      items.map((x) => x.q.newRefreshHash),
      items.map((x) => x.q.expectedRefreshHash ?? null),
      items.map((x) => JSON.stringify(x.q.record.detail)),
      items.map((x) => x.q.record.ip),
      items.map((x) => x.q.record.createdAt),
      ownerSeqCounter(''),
      REV_SEQ_COUNTER,
    ];
    let rows: AnswerRow[] | undefined;
    for (let attempt = 1; rows === undefined; attempt++) {
      try {
        rows = (await pool.query<AnswerRow>({ ...ISSUE_PASSES, values })).rows;
      } catch (e) {
        if ((e as { code?: unknown }).code !== DEADLOCK || attempt >= ATTEMPTS) throw e;
      }
    }
    const out = new Array<PassIssuanceOutcome | undefined>(batch.length);
    for (const r of rows) out[r.ord] = outcome(r);
    return out.map((o, i) => {
      if (o === undefined) throw new Error(`pass issuance: no answer for item ${i}`);
      return o;
    });
  };
}

function outcome(r: AnswerRow): PassIssuanceOutcome {
  if (Number(r.rate_count) > Number(r.rate_limit)) return { kind: 'limited', resetAt: Number(r.reset_at) };
  if (r.id === null) return { kind: 'refused' };
  const grant = grantFromRow({ ...r, id: r.id, rev_seq: r.grant_rev_seq });
  return { kind: 'issued', grant, revSeq: r.rev_seq === null ? 0 : Number(r.rev_seq) };
}

const compare = (a: string | undefined, b: string | undefined): number => (a === b ? 0 : (a ?? '') < (b ?? '') ? -1 : 1);
