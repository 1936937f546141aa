/**
 * Cloud verify's two statements in SQLite's dialect, run on the driver directly (hot-path.ts and
 * verify-worker.ts). They must mean what the Kysely repositories mean: the store contract suite runs
 * against both.
 */

/** The agent with the grant asked for (AgentsRepo.withGrant). Exported for the benchmark's query plans. */
export const READ_STANDING = `SELECT a.id, a.name, a.status, a.flag, a.unblocked_rev_seq, g.id AS grant_id, g.agent_id AS grant_agent_id, g.site AS grant_site, g.resource AS grant_resource, g.status AS grant_status
FROM agents a LEFT JOIN grants g ON g.id = ? AND g.agent_id = a.id WHERE a.id = ?`;

/**
 * One single-use key (as repos/single-use.ts): an entry that has expired is taken over; RETURNING
 * answers a row only when this statement inserted or took over the key.
 */
export const CONSUME = `INSERT INTO single_use (namespace, key, expires_at) VALUES (?, ?, ?)
ON CONFLICT (namespace, key) DO UPDATE SET expires_at = excluded.expires_at WHERE single_use.expires_at <= ? RETURNING 1 AS won`;
