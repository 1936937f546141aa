import type SQLite from 'better-sqlite3';
import type { Selectable } from 'kysely';
import type { SignInRotation } from '../ports/index.ts';
import type { OidcSignInsTable } from '../schema.ts';

/**
 * OidcSignInsRepo.rotate straight on the driver, for the commit thread (pass-worker.ts): the same
 * compare-and-set as repos/oidc-sign-ins.ts (the refresh hash replaced only while it is the one
 * presented, the sign-in open and under its refresh limit, the window restarted when over), run for
 * each item of a batch inside the thread's one transaction. SET reads the row as it was, as there.
 */
const ROTATE = `UPDATE oidc_sign_ins SET refresh_hash = @next,
  refresh_window_at = CASE WHEN refresh_window_at IS NULL OR refresh_window_at <= @windowStart THEN @now ELSE refresh_window_at END,
  refresh_count = CASE WHEN refresh_window_at IS NULL OR refresh_window_at <= @windowStart THEN 1 ELSE refresh_count + 1 END
WHERE sid = @sid AND refresh_hash = @current AND ended_at IS NULL AND expires_at > @now
  AND (refresh_window_at IS NULL OR refresh_window_at <= @windowStart OR refresh_count < @max)
RETURNING *`;

export type SignInRow = Selectable<OidcSignInsTable>;

/** The rotation of each item in turn (call it inside a transaction): the updated row, or undefined where the compare-and-set failed. */
export function signInRotations(db: SQLite.Database): (items: readonly SignInRotation[]) => (SignInRow | undefined)[] {
  const rotate = db.prepare<[Record<string, string | number>], SignInRow>(ROTATE);
  return (items) =>
    items.map((q) => rotate.get({ sid: q.sid, current: q.currentHash, next: q.nextHash, now: q.now, windowStart: q.now - q.limit.windowMs, max: q.limit.max }));
}
