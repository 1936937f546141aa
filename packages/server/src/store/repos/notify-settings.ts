import type { NotifySettingsRepo } from '../ports/index.ts';
import { type Db, fromBool, toBool } from './db.ts';

export function notifySettingsRepo(db: Db): NotifySettingsRepo {
  return {
    async get(userId) {
      const r = await db.selectFrom('notify_settings').selectAll().where('user_id', '=', userId).executeTakeFirst();
      if (!r) return undefined;
      const quiet = r.quiet_start !== null && r.quiet_end !== null && r.quiet_tz !== null ? { start: r.quiet_start, end: r.quiet_end, tz: r.quiet_tz } : null;
      return { userId: r.user_id, approvals: toBool(Number(r.approvals)), notes: toBool(Number(r.notes)), sessionNotices: toBool(Number(r.session_notices)), quietHours: quiet, updatedAt: Number(r.updated_at) };
    },
    async put(s) {
      const row = {
        user_id: s.userId,
        approvals: fromBool(s.approvals),
        notes: fromBool(s.notes),
        session_notices: fromBool(s.sessionNotices),
        quiet_start: s.quietHours?.start ?? null,
        quiet_end: s.quietHours?.end ?? null,
        quiet_tz: s.quietHours?.tz ?? null,
        updated_at: s.updatedAt,
      };
      const { user_id: _key, ...update } = row;
      await db.insertInto('notify_settings').values(row).onConflict((oc) => oc.column('user_id').doUpdateSet(update)).execute();
    },
    async deleteForUser(userId) {
      await db.deleteFrom('notify_settings').where('user_id', '=', userId).execute();
    },
  };
}
