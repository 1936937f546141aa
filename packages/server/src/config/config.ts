import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CONFIG_KEYS, type ConfigKey } from './keys.ts';

/** The service's whole configuration, typed and validated once at start. */
export interface Config {
  port: number;
  host: string;
  /** Public base URL, no trailing slash. Issuer of every token; WebAuthn RP id and origin come from it. */
  baseUrl: string;
  /** Empty: embedded SQLite in dataDir. `postgres://...`: PostgreSQL. */
  databaseUrl: string;
  dataDir: string;
  adminEmails: ReadonlySet<string>;
  /** When set, private signing keys are stored encrypted with a key derived from it. */
  keyEncryptionKey: string | null;
  keyRotationGraceSec: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimitBytes: number;
  trustProxy: boolean;
  rpName: string;
  loginThrottle: { perAccount: number; perAddress: number; windowSec: number };
  /** Seconds between housekeeping rounds; one node at a time (the lease holder) does the work. */
  housekeepingIntervalSec: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads `.env` (if present in the working directory) under the process environment; the process
 * environment wins. Unknown keys in `.env` are refused: a typo there would otherwise be ignored silently.
 */
export function loadEnv(cwd = process.cwd(), env: Env = process.env): Env {
  const file = resolve(cwd, '.env');
  if (!existsSync(file)) return env;
  const fromFile: Env = {};
  const problems: string[] = [];
  readFileSync(file, 'utf8').split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const eq = trimmed.indexOf('=');
    if (eq < 1) return void problems.push(`.env line ${i + 1}: expected KEY=value`);
    const key = trimmed.slice(0, eq).trim();
    let value = trimmed.slice(eq + 1).trim();
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1);
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      return void problems.push(`.env line ${i + 1}: unknown setting ${key} (known: ${CONFIG_KEYS.join(', ')})`);
    }
    fromFile[key] = value;
  });
  if (problems.length) throw new ConfigError(problems);
  return { ...fromFile, ...env };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Validates every setting and reports all problems at once. */
export function parseConfig(env: Env): Config {
  const problems: string[] = [];
  const get = (k: ConfigKey): string | undefined => {
    const v = env[k];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (k: ConfigKey, dflt: number, min: number, max: number): number => {
    const raw = get(k);
    if (raw === undefined) return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${k} must be an integer from ${min} to ${max}, got "${raw}"`);
      return dflt;
    }
    return n;
  };
  const bool = (k: ConfigKey, dflt: boolean): boolean => {
    const raw = get(k)?.toLowerCase();
    if (raw === undefined) return dflt;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${k} must be true or false, got "${raw}"`);
    return dflt;
  };

  const port = int('PORT', 8080, 0, 65535);
  const host = get('HOST') ?? '127.0.0.1';
  let baseUrl = get('BASE_URL') ?? `http://localhost:${port}`;
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') problems.push(`BASE_URL must be http(s), got "${baseUrl}"`);
    if (u.search || u.hash) problems.push('BASE_URL must not carry a query or fragment');
    baseUrl = u.origin + u.pathname.replace(/\/+$/, '');
  } catch {
    problems.push(`BASE_URL is not a URL: "${baseUrl}"`);
  }
  const databaseUrl = get('DATABASE_URL') ?? '';
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be empty (embedded database) or start with postgres:// or postgresql://');
  }
  const keyEncryptionKey = get('KEY_ENCRYPTION_KEY') ?? null;
  if (keyEncryptionKey !== null && keyEncryptionKey.length < 16) {
    problems.push('KEY_ENCRYPTION_KEY must be at least 16 characters (use `openssl rand -base64 32`)');
  }
  const logLevel = (get('LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const adminEmails = new Set(
    (get('ADMIN_EMAILS') ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean),
  );
  for (const e of adminEmails) if (!e.includes('@')) problems.push(`ADMIN_EMAILS: "${e}" is not an email address`);

  const config: Config = {
    port,
    host,
    baseUrl,
    databaseUrl,
    dataDir: resolve(get('DATA_DIR') ?? './data'),
    adminEmails,
    keyEncryptionKey,
    keyRotationGraceSec: int('KEY_ROTATION_GRACE_SECONDS', 86400, 0, 30 * 86400),
    logLevel,
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    trustProxy: bool('TRUST_PROXY', false),
    rpName: get('RP_NAME') ?? 'Mandate',
    loginThrottle: {
      perAccount: int('LOGIN_MAX_PER_ACCOUNT', 10, 1, 10000),
      perAddress: int('LOGIN_MAX_PER_ADDRESS', 50, 1, 100000),
      windowSec: int('LOGIN_WINDOW_SECONDS', 900, 1, 86400),
    },
    housekeepingIntervalSec: int('HOUSEKEEPING_INTERVAL_SECONDS', 600, 1, 86400),
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** Settings that are fine on a laptop and dangerous in production; printed loudly at start. */
export function unsafeDefaults(config: Config): string[] {
  const warnings: string[] = [];
  const url = new URL(config.baseUrl);
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !local) warnings.push(`BASE_URL ${config.baseUrl} is not https: passkeys and cookies are unsafe`);
  if (!config.keyEncryptionKey) warnings.push('KEY_ENCRYPTION_KEY is not set: private signing keys are stored unencrypted');
  if (config.adminEmails.size === 0) warnings.push('ADMIN_EMAILS is empty: nobody can rotate keys or administer operators');
  if (local) warnings.push(`BASE_URL is ${config.baseUrl}: development only; set BASE_URL to the public https address`);
  return warnings;
}
