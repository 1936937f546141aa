import type pg from 'pg';
import type { HotPath } from '../hot-path.ts';
import { type StandingRow, standingsFor } from '../repos/agents.ts';
import { distinctSorted, idOf } from '../repos/single-use.ts';

// One statement text whatever the number of items (arrays instead of one placeholder per value), so
// that each connection prepares it once (a named statement) and PostgreSQL plans it once.

/** The agents with the grants asked for (AgentsRepo.withGrants), from two text[] parameters. */
const standingsSql = (agentIds: string, grantIds: string) =>
  `SELECT a.id, a.name, a.status, a.flag, a.unblocked_rev_seq, g.id AS grant_id, g.agent_id AS grant_agent_id, g.site AS grant_site, g.resource AS grant_resource, g.status AS grant_status
FROM agents a LEFT JOIN grants g ON g.agent_id = a.id AND g.id = ANY(${grantIds}::text[]) WHERE a.id = ANY(${agentIds}::text[])`;

/** As repos/single-use.ts: the primary key decides each key; an expired entry (as of `now`) is taken over. */
const consumeSql = (namespaces: string, keys: string, expiries: string, now: string) =>
  `INSERT INTO single_use (namespace, key, expires_at)
SELECT * FROM unnest(${namespaces}::text[], ${keys}::text[], ${expiries}::bigint[])
ON CONFLICT (namespace, key) DO UPDATE SET expires_at = excluded.expires_at WHERE single_use.expires_at <= ${now}
RETURNING namespace, key`;

/** Exported, with CONSUME and VERIFY_LOOKUPS, for bench/verify-statement.ts (what each part of the statement costs). */
export const READ_STANDINGS: pg.QueryConfig = { name: 'mandate_verify_standings', text: standingsSql('$1', '$2') };

export const CONSUME: pg.QueryConfig = { name: 'mandate_single_use_consume', text: consumeSql('$1', '$2', '$3', '$4') };

/**
 * Both at once for a batch of verifications (Store.verifyLookup): one round trip, one statement (a
 * data-modifying CTE runs exactly once). Exported for the benchmark's query plans.
 */
export const VERIFY_LOOKUPS: pg.QueryConfig = {
  name: 'mandate_verify_lookups',
  text: `WITH won AS (${consumeSql('$3', '$4', '$5', '$6')}), standings AS (${standingsSql('$1', '$2')})
SELECT (SELECT coalesce(json_agg(json_build_array(namespace, key)), '[]'::json) FROM won) AS won,
       (SELECT coalesce(json_agg(standings), '[]'::json) FROM standings) AS standings`,
};

/** Cloud verify's statements as named prepared statements on the store's pool (see HotPath). */
export function postgresHotPath(pool: pg.Pool): HotPath {
  return {
    async withGrants(pairs) {
      if (pairs.length === 0) return [];
      const agentIds = [...new Set(pairs.map((x) => x.agentId))];
      const grantIds = [...new Set(pairs.map((x) => x.grantId))];
      const { rows } = await pool.query<StandingRow>({ ...READ_STANDINGS, values: [agentIds, grantIds] });
      return standingsFor(rows, pairs);
    },
    async consumeMany(items, now) {
      if (items.length === 0) return [];
      // Distinct (one statement cannot update a row twice) and sorted (concurrent statements lock
      // keys in the same order and cannot deadlock).
      const rows = distinctSorted(items);
      const { rows: won } = await pool.query<{ namespace: string; key: string }>({
        ...CONSUME,
        values: [rows.map((r) => r.namespace), rows.map((r) => r.key), rows.map((r) => r.expiresAt), now],
      });
      const first = new Set(won.map(idOf));
      // Only the first listing of a key may report it; a repeat in the same call is a replay.
      return items.map((i) => first.delete(idOf(i)));
    },
    async verifyLookups(batch) {
      if (batch.length === 0) return [];
      const pairs = batch.map((q) => ({ agentId: q.agentId, grantId: q.grantId }));
      const keys = distinctSorted(batch.map((q) => q.jti));
      const { rows } = await pool.query<{ won: [string, string][]; standings: StandingRow[] }>({
        ...VERIFY_LOOKUPS,
        values: [
          [...new Set(pairs.map((x) => x.agentId))],
          [...new Set(pairs.map((x) => x.grantId))],
          keys.map((k) => k.namespace),
          keys.map((k) => k.key),
          keys.map((k) => k.expiresAt),
          // Expired entries are taken over against the earliest clock of the batch (single-use-batching.ts).
          Math.min(...batch.map((q) => q.now)),
        ],
      });
      const row = rows[0];
      if (row === undefined) throw new Error('verify lookup answered no row');
      const standings = standingsFor(row.standings, pairs);
      const first = new Set(row.won.map(([namespace, key]) => idOf({ namespace, key })));
      // Only the first listing of a key may report it; a repeat in the same batch is a replay.
      return batch.map((q, i) => ({ standing: standings[i], fresh: first.delete(idOf(q.jti)) }));
    },
    // The pool belongs to the store; it is ended with it.
    async close() {},
  };
}
