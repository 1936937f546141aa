import { SMS_PROVIDERS } from '../delivery/sms-providers.ts';

/**
 * The service's own settings, documented in README.md and .env.example. Besides these, the
 * per-provider keys OAUTH_<NAME>_ISSUER, _CLIENT_ID, _CLIENT_SECRET and _LABEL (oauth-providers.ts),
 * and each SMS provider's settings, which its file declares (delivery/sms-providers/).
 */
export const SERVICE_CONFIG_KEYS = [
  'PORT',
  'HOST',
  'BASE_URL',
  'NODE_INTERNAL_URL',
  'TAKEOVER_RELAY',
  'WBA_AGENT_DOMAIN',
  'AGENT_PACKAGE',
  'DATABASE_URL',
  'DATA_DIR',
  'ADMIN_EMAILS',
  'KEY_ENCRYPTION_KEY',
  'KEY_ROTATION_GRACE_SECONDS',
  'LOG_LEVEL',
  'BODY_LIMIT_BYTES',
  'TRUST_PROXY',
  'RP_NAME',
  'LOGIN_MAX_PER_ACCOUNT',
  'LOGIN_MAX_PER_ADDRESS',
  'LOGIN_WINDOW_SECONDS',
  'HOUSEKEEPING_INTERVAL_SECONDS',
  'OUTBOUND_ALLOW_LOOPBACK',
  'VAPID_PUBLIC_KEY',
  'VAPID_PRIVATE_KEY',
  'VAPID_SUBJECT',
  'PUSH_SERVICE_HOSTS',
  'FCM_PROJECT_ID',
  'FCM_SERVICE_ACCOUNT_FILE',
  'FCM_API_BASE',
  'FCM_TOKEN_URL',
  'ANDROID_PACKAGE_NAME',
  'ANDROID_CERT_SHA256',
  'ANDROID_APK_PATH',
  'OUTBOX_POLL_MS',
  'REVOCATION_KEEPALIVE_MS',
  'REVOCATION_STREAM_BUFFER_BYTES',
  'REVOCATION_HELD_DELTAS',
  'REVOCATION_MAX_STREAMS',
  'REVOCATION_MAX_STREAMS_PER_ADDRESS',
  'REVOCATION_MAX_STREAMS_PER_NETWORK',
  'OUTBOX_CLAIM_SECONDS',
  'SMTP_URL',
  'MAIL_FROM',
  'SMS_PROVIDER',
  'METRICS_PORT',
  'METRICS_HOST',
  'OAUTH_PROVIDERS',
] as const;

export type ConfigKey = (typeof SERVICE_CONFIG_KEYS)[number];

/** Every setting the service reads, documented in README.md and .env.example: its own, then every SMS provider's. */
export const CONFIG_KEYS: readonly string[] = [...SERVICE_CONFIG_KEYS, ...SMS_PROVIDERS.keys];
