import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { TEST_MESSAGE, pushPayload } from '../../../domain/notifications/messages.ts';
import { newId } from '../../../domain/ids.ts';
import { ReadableLine, withErrors } from '../../schemas/common.ts';

const Name = ReadableLine({ minLength: 1, maxLength: 100, description: 'shown in the device list; defaults to one made from the User-Agent' });

const PushIn = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2048, description: 'the push service URL of the subscription: https only' }),
  expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  keys: Type.Object({
    p256dh: Type.String({ minLength: 1, maxLength: 200 }),
    auth: Type.String({ minLength: 1, maxLength: 100 }),
  }),
  name: Type.Optional(Name),
}, { description: "`PushSubscription.toJSON()` plus an optional `name`" });

const UnsubIn = Type.Union([Type.Object({ endpoint: Type.String({ minLength: 1, maxLength: 2048 }) }), Type.Object({}, { additionalProperties: false }), Type.Null()]);

const FcmIn = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4096, description: 'the FCM registration token of the Android app' }),
  name: Type.Optional(Name),
});

const Registered = Type.Object({ device_id: Type.String() });

const LIMITS_TEXT = 'An owner may have 50 notifying devices (409 beyond) and register 60 per hour (429 beyond).';

export async function pushRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/push/keys', {
    schema: {
      summary: 'The VAPID public key to subscribe with',
      description: 'Pass it, base64url-decoded, as `applicationServerKey` to `pushManager.subscribe()`. The same for every node of this service.',
      tags: ['push'],
      response: { 200: Type.Object({ vapid_public_key: Type.String({ description: 'base64url, uncompressed P-256 point' }) }) },
    },
  }, async () => ({ vapid_public_key: s.vapidPublicKey }));

  app.post('/api/push', {
    schema: {
      summary: 'Register a browser for push notifications',
      description: `Upserted by endpoint: the same subscription sent again keeps its device id (and moves to this owner if another account had it on that browser). 400 when the endpoint is not an https: URL of a public host (decisions §24) or the keys are not a P-256 key and a 16-byte secret. ${LIMITS_TEXT}`,
      tags: ['push'],
      body: PushIn,
      response: withErrors({ 200: Registered }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { endpoint, keys, name } = request.body;
    const device = await s.devices.registerWebPush(user.id, { endpoint, keys, ...(name !== undefined ? { name } : {}) }, request.headers['user-agent']);
    return { device_id: device.id };
  });

  app.post('/api/push/unsub', {
    schema: {
      summary: 'Stop push notifications',
      description: 'With `endpoint`: that subscription only. With an empty body or `{}`: every web-push subscription of the owner (FCM registrations and passkeys stay). Answers how many were removed (0 when none matched).',
      tags: ['push'],
      body: UnsubIn,
      response: withErrors({ 200: Type.Object({ removed: Type.Integer() }) }, 401, 403),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const body = request.body;
    const endpoint = body && 'endpoint' in body ? body.endpoint : null;
    return { removed: await s.devices.unsubscribe(user.id, endpoint) };
  });

  app.post('/api/push/test', {
    schema: {
      summary: 'Send a test notification to each of your notifying devices',
      description: 'Sent at once, not queued: `sent` devices accepted it, `failed` did not (each with its outcome in `devices`). A device its push service reports gone is removed. `{sent: 0, failed: 0}` when the owner has no notifying device. 5 per minute.',
      tags: ['push'],
      response: withErrors({
        200: Type.Object({
          sent: Type.Integer(),
          failed: Type.Integer(),
          devices: Type.Array(Type.Object({ id: Type.String(), outcome: Type.String({ description: '`sent`, `gone` (removed), `retry` (try later) or `failed`' }), detail: Type.Optional(Type.String()) })),
        }),
      }, 401, 403, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    await s.limiter.check(`push-test:${user.id}`, 5, 60);
    return s.outbox.sendTest(user.id, pushPayload(newId('n'), TEST_MESSAGE, false));
  });

  app.post('/api/fcm', {
    schema: {
      summary: 'Register the Android app for push notifications',
      description: `Upserted by token. 409 when this service has no FCM configuration (FCM_PROJECT_ID, FCM_SERVICE_ACCOUNT_FILE). ${LIMITS_TEXT}`,
      tags: ['push'],
      body: FcmIn,
      response: withErrors({ 200: Registered }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const device = await s.devices.registerFcm(user.id, request.body.token, request.body.name);
    return { device_id: device.id };
  });
}
