import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import type { DeviceView } from '../../../domain/devices/devices.ts';
import { iso, isoOrNull } from '../../../clock.ts';
import { IdParam, Timestamp, withErrors } from '../../schemas/common.ts';
import { MAX_PUSH_DEVICES } from '../../../domain/devices/devices.ts';

const DeviceOut = Type.Object({
  id: Type.String({ description: 'device id (`dev_`)' }),
  kind: Type.Union([Type.Literal('passkey'), Type.Literal('webpush'), Type.Literal('fcm')], { description: '`passkey` approves; `webpush` (a browser) and `fcm` (the Android app) are told of requests' }),
  name: Type.String(),
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'passkey: last approval or sign-in; webpush/fcm: last push its push service accepted' }),
  paused_until: Type.Union([Timestamp, Type.Null()], { description: 'webpush/fcm: its push service failed again and again, so pushes to it wait until this time (each failure in a row doubles the pause, up to an hour; one accepted push ends it); null while it is tried as usual, and always for a passkey' }),
});

const deviceOut = (d: DeviceView) => ({ id: d.id, kind: d.kind, name: d.name, created_at: iso(d.createdAt), last_used_at: isoOrNull(d.lastUsedAt), paused_until: isoOrNull(d.pausedUntil) });

export async function deviceRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/devices', {
    schema: {
      summary: "The owner's devices",
      description: `Passkeys (they approve), web-push subscriptions and Android FCM registrations (they are told of each request; the first answer wins and the others get \`dismiss\`), oldest first. Not paged: at most ${MAX_PUSH_DEVICES} notifying devices per owner, and the passkeys the owner registered (each one a WebAuthn ceremony on the owner's own device).`,
      tags: ['devices'],
      response: withErrors({ 200: Type.Array(DeviceOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return (await s.devices.list(user.id)).map(deviceOut);
  });

  app.delete('/api/devices/:device_id', {
    schema: {
      summary: 'Remove a device',
      description: "A web-push or FCM device is removed with any session, with its queued pushes. A passkey needs a session made by passkey sign-in once the owner has one: with a password session the answer is 403 `sign in with one of your passkeys to add or remove passkeys` with `next_step`. 404 for an unknown id or another owner's device.",
      tags: ['devices'],
      params: IdParam('device_id', 'dev'),
      response: withErrors({ 200: Type.Object({ ok: Type.Boolean() }) }, 401, 403, 404),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    await s.devices.remove(owner, request.params.device_id);
    return { ok: true };
  });
}
