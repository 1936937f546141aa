import type pg from 'pg';
import type { HotPath } from '../hot-path.ts';
import { type StandingRow, standingsFor } from '../repos/agents.ts';
import { distinctSorted, idOf } from '../repos/single-use.ts';

// One statement text whatever the number of items (arrays instead of one placeholder per value), so
// that each connection prepares it once (a named statement) and PostgreSQL plans it once.
const READ_STANDINGS: pg.QueryConfig = {
  name: 'mandate_verify_standings',
  text: `SELECT a.id, a.name, a.status, a.flag, g.id AS grant_id, g.agent_id AS grant_agent_id, g.site AS grant_site, g.status AS grant_status
FROM agents a LEFT JOIN grants g ON g.agent_id = a.id AND g.id = ANY($2::text[]) WHERE a.id = ANY($1::text[])`,
};

// As repos/single-use.ts: the primary key decides each key; an expired entry is taken over.
const CONSUME: pg.QueryConfig = {
  name: 'mandate_single_use_consume',
  text: `INSERT INTO single_use (namespace, key, expires_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
ON CONFLICT (namespace, key) DO UPDATE SET expires_at = excluded.expires_at WHERE single_use.expires_at <= $4
RETURNING namespace, key`,
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
    // The pool belongs to the store; it is ended with it.
    async close() {},
  };
}
