import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso, isoOrNull } from '../../../clock.ts';
import { INBOX_DAYS, INBOX_PAGE, type InboxItem } from '../../../domain/notifications/inbox.ts';
import type { NotificationMarks, NotifySettingsRecord } from '../../../store/ports/index.ts';
import { Timestamp, withErrors } from '../../schemas/common.ts';

const NotificationOut = Type.Object({
  id: Type.String({ description: '`n_...`' }),
  seq: Type.Integer({ description: 'pass as `before` to read older ones' }),
  type: Type.Union(['approval', 'note', 'agent_added', 'takeover', 'auto_approved', 'security'].map((t) => Type.Literal(t))),
  title: Type.String(),
  body: Type.String(),
  created_at: Timestamp,
  read_at: Type.Union([Timestamp, Type.Null()]),
  txn_id: Type.Optional(Type.String()),
  request_status: Type.Optional(Type.Union(['pending', 'approved', 'denied', 'expired', 'ended'].map((t) => Type.Literal(t)), {
    description: 'With `txn_id`: how that request stands now, so a client can show how it ended. `approved` (a used step-up too), `denied` (by you, or cancelled when the agent was revoked or deleted), `expired` (not answered in time), `pending`, or `ended` (the request was purged after it ended).',
  })),
  takeover_id: Type.Optional(Type.String()),
});

const notificationOut = (n: InboxItem) => ({
  id: n.id,
  seq: n.seq,
  type: n.type,
  title: n.title,
  body: n.body,
  created_at: iso(n.createdAt),
  read_at: isoOrNull(n.readAt),
  ...(n.txnId ? { txn_id: n.txnId } : {}),
  ...(n.requestStatus ? { request_status: n.requestStatus } : {}),
  ...(n.takeoverId ? { takeover_id: n.takeoverId } : {}),
});

const Ids = (what: string) => Type.Array(Type.String({ maxLength: 64 }), { maxItems: 500, description: what });
const ReadIn = Type.Union([
  Type.Object({ ids: Ids('notification ids') }, { additionalProperties: false }),
  Type.Object({ txn_ids: Ids('approval requests: their notifications') }, { additionalProperties: false }),
  Type.Object({ takeover_ids: Ids('take-overs: their notifications') }, { additionalProperties: false }),
  Type.Object({}, { additionalProperties: false }),
  Type.Null(),
], { description: '`{}` (or no body) marks all; otherwise exactly one of `ids`, `txn_ids`, `takeover_ids`' });

const HHMM = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: '"HH:MM", 24-hour' });
const QuietHoursIn = Type.Object({ start: HHMM, end: HHMM, tz: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' }) });
const NotifySettingsIn = Type.Object({
  approvals: Type.Optional(Type.Boolean({ description: 'push approval requests; cannot be false while you have agents' })),
  notes: Type.Optional(Type.Boolean({ description: 'push agent notes' })),
  session_notices: Type.Optional(Type.Boolean({ description: 'push security notices and "agent added"' })),
  quiet_hours: Type.Optional(Type.Union([QuietHoursIn, Type.Null()], { description: 'null turns quiet hours off' })),
}, { additionalProperties: false });
const NotifySettingsOut = Type.Object({
  approvals: Type.Boolean(),
  notes: Type.Boolean(),
  session_notices: Type.Boolean(),
  quiet_hours: Type.Union([Type.Object({ start: Type.String(), end: Type.String(), tz: Type.String() }), Type.Null()]),
});
const settingsOut = (x: NotifySettingsRecord) => ({ approvals: x.approvals, notes: x.notes, session_notices: x.sessionNotices, quiet_hours: x.quietHours });

const SETTINGS_TEXT = 'Quiet hours: approval requests (and take-overs) are still pushed, silently (no sound or vibration); notes, "agent added" and security notices are not pushed then, only kept in the inbox.';

function marksOf(body: Record<string, string[]> | null | undefined): NotificationMarks {
  if (body?.['ids']) return { ids: body['ids'] };
  if (body?.['txn_ids']) return { txnIds: body['txn_ids'] };
  if (body?.['takeover_ids']) return { takeoverIds: body['takeover_ids'] };
  return { all: true };
}

export async function notificationRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/notifications', {
    schema: {
      summary: "The owner's notifications, newest first",
      description: `Every push-worthy event, pushed or not, for ${INBOX_DAYS} days. Page with \`before\` = the \`next_before\` of the previous page (null on the last page). \`unread\` counts all unread notifications.`,
      tags: ['notifications'],
      querystring: Type.Object({
        before: Type.Integer({ minimum: 0, default: 0, description: 'a `seq`; 0 = from the newest' }),
        limit: Type.Integer({ minimum: 1, maximum: INBOX_PAGE.max, default: INBOX_PAGE.default }),
      }),
      response: withErrors({ 200: Type.Object({ items: Type.Array(NotificationOut), next_before: Type.Union([Type.Integer(), Type.Null()]), unread: Type.Integer() }) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const page = await s.inbox.page(user.id, request.query.before, request.query.limit);
    return { items: page.items.map(notificationOut), next_before: page.nextBefore, unread: page.unread };
  });

  app.post('/api/notifications/read', {
    schema: {
      summary: 'Mark notifications read',
      description: 'All of them (`{}` or no body), the listed `ids`, or those about the listed approval requests (`txn_ids`) or take-overs (`takeover_ids`). Answers how many changed; unknown ids and other owners\' are ignored.',
      tags: ['notifications'],
      body: ReadIn,
      response: withErrors({ 200: Type.Object({ marked: Type.Integer() }) }, 401, 403),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return { marked: await s.inbox.markRead(user.id, marksOf(request.body as Record<string, string[]> | null)) };
  });

  app.get('/api/settings/notifications', {
    schema: { summary: 'Your notification settings', description: SETTINGS_TEXT, tags: ['notifications'], response: withErrors({ 200: NotifySettingsOut }, 401) },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return settingsOut(await s.notifySettings.get(user.id));
  });

  app.post('/api/settings/notifications', {
    schema: {
      summary: 'Change your notification settings',
      description: `Only the fields sent change; answers the settings now. ${SETTINGS_TEXT} 400: approvals switched off while you have agents, a bad time or time zone, or start = end.`,
      tags: ['notifications'],
      body: NotifySettingsIn,
      response: withErrors({ 200: NotifySettingsOut }, 400, 401, 403),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { approvals, notes, session_notices: sessionNotices, quiet_hours: quietHours } = request.body;
    const patch = { ...(approvals !== undefined ? { approvals } : {}), ...(notes !== undefined ? { notes } : {}), ...(sessionNotices !== undefined ? { sessionNotices } : {}), ...(quietHours !== undefined ? { quietHours } : {}) };
    return settingsOut(await s.notifySettings.update(user.id, patch));
  });
}
