import { readFileSync } from 'node:fs';
import type { Config } from '../config/config.ts';
import type { Clock } from '../clock.ts';
import { guardedFetch } from '../outbound/guarded-fetch.ts';
import { pushHostPolicy } from '../outbound/push-hosts.ts';
import { checkServiceAccountKey } from '../crypto/service-account-jwt.ts';
import type { SigningKeys } from '../crypto/signing-keys.ts';
import { backchannelTransport } from './backchannel.ts';
import { fcmTransport, parseServiceAccount } from './fcm.ts';
import type { Transports } from './outbox-worker.ts';
import { type VapidKeys, webPushTransport } from './web-push.ts';
import { KeyEncryption } from '../crypto/key-encryption.ts';
import { smtpMailTransport } from './mail.ts';
import { SMS_PROVIDERS } from './sms-providers.ts';

/**
 * The transports of this configuration. Web push and back-channel logout always work (their
 * addresses are chosen by browsers and by clients' owners, so every request goes through the
 * outbound guard of decisions §24); FCM only when a project and its service account are configured
 * (its addresses are the operator's own); mail only when SMTP_URL is set (the operator's own
 * server too). Throws at start when the service-account file cannot be read or its key cannot
 * sign. `keys` sign the logout tokens, with `config.baseUrl` as their issuer.
 */
export async function buildTransports(config: Config, vapid: VapidKeys, clock: Clock, keys: SigningKeys): Promise<Transports> {
  const fetch = guardedFetch({ allowLoopback: config.outboundAllowLoopback });
  const hosts = pushHostPolicy(config.pushServiceHosts, config.outboundAllowLoopback);
  const webpush = webPushTransport({ vapid: { ...vapid, subject: config.vapidSubject }, fetch, clock, hosts });
  const backchannel = backchannelTransport({ fetch, keys, issuer: config.baseUrl, clock });
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
  // Mail goes to the operator's own SMTP server (SMTP_URL), not through the outbound guard (§24);
  // without one, the outbox worker writes each mail to the log (development).
  const email = config.mail.smtpUrl ? smtpMailTransport({ smtpUrl: config.mail.smtpUrl, from: config.mail.from }) : null;
  const mailKeys = config.keyEncryptionKey ? new KeyEncryption(config.keyEncryptionKey) : null;
  // SMS goes to the operator's own provider (SMS_PROVIDER; see sms-providers/twilio.ts for why not
  // through the outbound guard); without one, the outbox worker writes each SMS to the log (development).
  const sms = config.sms ? SMS_PROVIDERS.sender(config.sms, { clock }) : null;
  return { webpush, fcm, backchannel, email, mailKeys, sms };
}
