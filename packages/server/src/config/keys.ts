/** Every setting the service reads, documented in README.md and .env.example. */
export const CONFIG_KEYS = [
  'PORT',
  'HOST',
  'BASE_URL',
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
] as const;

export type ConfigKey = (typeof CONFIG_KEYS)[number];
