import { readFileSync } from 'node:fs';
import type { Config } from '../config/config.ts';
import type { Clock } from '../domain/clock.ts';
import { guardedFetch } from '../outbound/guarded-fetch.ts';
import { checkServiceAccountKey } from '../crypto/service-account-jwt.ts';
import { fcmTransport, parseServiceAccount } from './fcm.ts';
import type { Transports } from './outbox-worker.ts';
import { type VapidKeys, webPushTransport } from './web-push.ts';

/**
 * The push transports of this configuration. Web push always works (its endpoints are chosen by
 * browsers, so every request goes through the outbound guard of decisions §24); FCM only when a
 * project and its service account are configured (its addresses are the operator's own). Throws
 * at start when the service-account file cannot be read or its key cannot sign.
 */
export async function buildTransports(config: Config, vapid: VapidKeys, clock: Clock): Promise<Transports> {
  const fetch = guardedFetch({ allowLoopback: config.outboundAllowLoopback });
  const webpush = webPushTransport({ vapid: { ...vapid, subject: config.vapidSubject }, fetch, clock });
  let fcm: Transports['fcm'] = null;
  if (config.fcm) {
    let json: string;
    try {
      json = readFileSync(config.fcm.serviceAccountFile, 'utf8');
    } catch (e) {
      throw new Error(`FCM_SERVICE_ACCOUNT_FILE ${config.fcm.serviceAccountFile} cannot be read: ${(e as Error).message}`);
    }
    const serviceAccount = parseServiceAccount(json);
    // A key jose cannot use stops the start here, not at the first push hours later.
    await checkServiceAccountKey(serviceAccount);
    fcm = fcmTransport({ projectId: config.fcm.projectId, serviceAccount, apiBase: config.fcm.apiBase, tokenUrl: config.fcm.tokenUrl, clock });
  }
  return { webpush, fcm };
}
