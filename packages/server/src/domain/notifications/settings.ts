import type { NotifySettingsRecord, QuietHours, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest } from '../errors.ts';

/** What an owner who never changed anything gets: everything on, no quiet hours. */
export const DEFAULT_SETTINGS = { approvals: true, notes: true, sessionNotices: true, quietHours: null } as const;

export interface SettingsPatch {
  approvals?: boolean;
  notes?: boolean;
  sessionNotices?: boolean;
  /** null clears the quiet hours. */
  quietHours?: QuietHours | null;
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

/** Is `tz` an IANA time zone this runtime knows? */
function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function checkQuietHours(q: QuietHours): void {
  if (!HHMM.test(q.start) || !HHMM.test(q.end)) throw badRequest('quiet_hours.start and quiet_hours.end must be times as "HH:MM" (24-hour), e.g. "22:00"');
  if (q.start === q.end) throw badRequest('quiet_hours.start and quiet_hours.end must differ (to turn quiet hours off, send "quiet_hours": null)');
  if (!isTimeZone(q.tz)) throw badRequest(`quiet_hours.tz "${q.tz}" is not a time zone; use an IANA name such as "Europe/Paris" or "UTC"`);
}

/** Minutes since midnight at `now` in `tz`. */
function minutesIn(tz: string, now: number): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(now));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return get('hour') * 60 + get('minute');
}

const toMinutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Is `now` inside the quiet hours? A window may cross midnight (22:00-07:00); the end is exclusive. */
export function inQuietHours(q: QuietHours | null, now: number): boolean {
  if (!q) return false;
  const m = minutesIn(q.tz, now);
  const start = toMinutes(q.start);
  const end = toMinutes(q.end);
  return start < end ? m >= start && m < end : m >= start || m < end;
}

/** An owner's notification settings (POST /api/settings/notifications). */
export class NotifySettings {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async get(userId: string): Promise<NotifySettingsRecord> {
    return (await this.store.notifySettings.get(userId)) ?? { userId, ...DEFAULT_SETTINGS, updatedAt: 0 };
  }

  /**
   * Applies a patch. Approvals reach the owner's devices while any agent can ask for them: switching
   * them off then would leave requests to expire unseen, so it is refused (400) until no agent is left.
   */
  async update(userId: string, patch: SettingsPatch): Promise<NotifySettingsRecord> {
    if (patch.quietHours) checkQuietHours(patch.quietHours);
    if (patch.approvals === false) {
      const agents = await this.store.agents.listForUser(userId);
      if (agents.length > 0) throw badRequest('approval notifications cannot be switched off while you have agents: their requests would expire unseen (remove the agents first)');
    }
    const current = await this.get(userId);
    const next: NotifySettingsRecord = {
      userId,
      approvals: patch.approvals ?? current.approvals,
      notes: patch.notes ?? current.notes,
      sessionNotices: patch.sessionNotices ?? current.sessionNotices,
      quietHours: patch.quietHours === undefined ? current.quietHours : patch.quietHours,
      updatedAt: this.clock.now(),
    };
    await this.store.notifySettings.put(next);
    return next;
  }
}
