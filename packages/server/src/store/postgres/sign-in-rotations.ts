import type pg from 'pg';
import type { Selectable } from 'kysely';
import type { OidcSignInRecord, SignInRotationBatch } from '../ports/index.ts';
import type { OidcSignInsTable } from '../schema.ts';
import { signInFromRow } from '../repos/oidc-sign-ins.ts';
import { ATTEMPTS, DEADLOCK } from './pass-issuance.ts';

/**
 * A batch of OIDC refresh token rotations in ONE statement (one round trip, one commit): the
 * compare-and-set of repos/oidc-sign-ins.ts (rotate) over the batch's arrays. The batch holds each
 * sid once (stepped-batching.ts), so each row is updated at most once; rows are taken in sid order,
 * and a statement PostgreSQL cancels as a deadlock (nothing written) is sent again.
 */
const ROTATE: pg.QueryConfig = {
  name: 'mandate_sign_in_rotations',
  text: `UPDATE oidc_sign_ins s SET refresh_hash = i.next_hash,
  refresh_window_at = CASE WHEN s.refresh_window_at IS NULL OR s.refresh_window_at <= i.window_start THEN i.now ELSE s.refresh_window_at END,
  refresh_count = CASE WHEN s.refresh_window_at IS NULL OR s.refresh_window_at <= i.window_start THEN 1 ELSE s.refresh_count + 1 END
FROM (SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::int[])
  AS t(ord, sid, current_hash, next_hash, now, window_start, max_count)) i
WHERE s.sid = i.sid AND s.refresh_hash = i.current_hash AND s.ended_at IS NULL AND s.expires_at > i.now
  AND (s.refresh_window_at IS NULL OR s.refresh_window_at <= i.window_start OR s.refresh_count < i.max_count)
RETURNING i.ord, s.*`,
};

export function postgresSignInRotations(pool: pg.Pool): SignInRotationBatch {
  return async (batch) => {
    if (batch.length === 0) return [];
    // Sorted by sid (ord keeps each answer's place): rows locked in one order.
    const items = batch.map((q, ord) => ({ q, ord })).sort((a, b) => (a.q.sid < b.q.sid ? -1 : a.q.sid > b.q.sid ? 1 : 0));
    const values = [
      items.map((x) => x.ord),
      items.map((x) => x.q.sid),
      items.map((x) => x.q.currentHash),
      items.map((x) => x.q.nextHash),
      items.map((x) => x.q.now),
      items.map((x) => x.q.now - x.q.limit.windowMs),
      items.map((x) => x.q.limit.max),
    ];
    let rows: (Selectable<OidcSignInsTable> & { ord: number })[] | undefined;
    for (let attempt = 1; rows === undefined; attempt++) {
      try {
        rows = (await pool.query<Selectable<OidcSignInsTable> & { ord: number }>({ ...ROTATE, values })).rows;
      } catch (e) {
        if ((e as { code?: unknown }).code !== DEADLOCK || attempt >= ATTEMPTS) throw e;
      }
    }
    const out = new Array<OidcSignInRecord | undefined>(batch.length).fill(undefined);
    for (const { ord, ...row } of rows) out[ord] = signInFromRow(row);
    return out;
  };
}
