import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isAgentPackageName } from '@mandate/protocol/agent-command';
import { SERVICE_CONFIG_KEYS, type ConfigKey } from './keys.ts';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.ts';
import { type OAuthProviderConfig, isOAuthProviderKey, parseOAuthProviders } from './oauth-providers.ts';
import { DEFAULT_PUSH_SERVICE_HOSTS, isPushHostPattern } from '../outbound/push-hosts.ts';
import { type ConfiguredSms, SMS_PROVIDERS, type SmsProviders } from '../delivery/sms-providers.ts';
import { smsSettings } from './sms-settings.ts';

/** The service's whole configuration, typed and validated once at start. */
export interface Config {
  port: number;
  host: string;
  /** Public base URL, no trailing slash. Issuer of every token; WebAuthn RP id and origin come from it. */
  baseUrl: string;
  /**
   * This node's address as the other nodes reach it (NODE_INTERNAL_URL, no trailing slash): a
   * take-over end that reaches another node is forwarded here (decisions §21). null: one node.
   */
  nodeInternalUrl: string | null;
  /**
   * TAKEOVER_RELAY: `process` (default) relays take-over frames from a relay process of its own, with
   * a heap of a few MB (bench/README.md, take-over relay, part 3); `inline` relays them in the
   * service's process (for platforms that cannot pass a socket to a child process).
   */
  takeoverRelay: 'process' | 'inline';
  /**
   * WBA_AGENT_DOMAIN: agents' Web Bot Auth addresses are `https://a-<12 hex>.<domain>`, served by
   * Host (decisions §22; the wildcard DNS and certificate are the operator's). null: `<baseUrl>/wba/a-<12 hex>`.
   */
  wbaAgentDomain: string | null;
  /** A registry package (AGENT_PACKAGE) that printed commands install the agent tool from; null: `<baseUrl>/download/agent` (decisions §26). */
  agentPackage: string | null;
  /** Empty: embedded SQLite in dataDir. `postgres://...`: PostgreSQL. */
  databaseUrl: string;
  dataDir: string;
  adminEmails: ReadonlySet<string>;
  /** When set, private signing keys are stored encrypted with a key derived from it. */
  keyEncryptionKey: string | null;
  keyRotationGraceSec: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimitBytes: number;
  /** Which X-Forwarded-For entries give the client address; see trust-proxy.ts. */
  trustProxy: TrustProxy;
  rpName: string;
  loginThrottle: { perAccount: number; perAddress: number; windowSec: number };
  /** Seconds between housekeeping rounds; one node at a time (the lease holder) does the work. */
  housekeepingIntervalSec: number;
  /** Outbound fetches (decisions §24) may also go to http: and loopback: development and tests only. */
  outboundAllowLoopback: boolean;
  /** Web push VAPID keys from the environment; null: generated on first start and kept in the database. */
  vapid: { publicKey: string; privateKey: string } | null;
  /** Hosts a web-push endpoint may name (`*.domain`: any host under it); null: any host (PUSH_SERVICE_HOSTS=*). */
  pushServiceHosts: readonly string[] | null;
  /** VAPID `sub`: a mailto: or https: contact for push services. */
  vapidSubject: string;
  /** FCM HTTP v1 (Android); null when FCM_PROJECT_ID is unset. */
  fcm: { projectId: string; serviceAccountFile: string; apiBase: string; tokenUrl: string } | null;
  android: { packageName: string | null; certSha256: string[]; apkPath: string | null };
  /** How often each node looks for outbox messages due (its own messages are sent at once). */
  outboxPollMs: number;
  /**
   * The revocation event stream (decisions §30): keep-alive comment interval, bytes a stream may have
   * waiting unsent before its client is dropped, deltas held for resuming with Last-Event-ID, and the
   * streams one node holds open at most (past it a new one gets 503 and the site polls meanwhile), and
   * of those the share of one client address (IPv4, IPv6 /64) and of one IPv6 /48 (past it: 429).
   */
  revocationEvents: { keepAliveMs: number; maxBufferBytes: number; heldDeltas: number; maxStreams: number; maxStreamsPerAddress: number; maxStreamsPerNetwork: number };
  /** How long a node's claim on an outbox message lasts: after a node dies mid-send, another sends it then. */
  outboxClaimSec: number;
  /** Outgoing mail (decisions §25): SMTP through nodemailer; smtpUrl null: mail goes to the log and the outbox only. */
  mail: { smtpUrl: string | null; from: string };
  /**
   * Text messages (decisions §14): SMS_PROVIDER and that provider's settings (delivery/sms-providers/);
   * null: each SMS goes to the log and the outbox only (development).
   */
  sms: ConfiguredSms | null;
  /** Prometheus GET /metrics on a port of its own (docs/operations/metrics.md); null: off. */
  metrics: { port: number; host: string } | null;
  /** Identity providers for sign-in and approval (decisions §15; oauth-providers.ts); empty: none. */
  oauthProviders: readonly OAuthProviderConfig[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads `.env` (if present in the working directory) under the process environment; the process
 * environment wins. Unknown keys in `.env` are refused: a typo there would otherwise be ignored
 * silently. Known: the service's own keys, the identity providers' and the SMS providers' (`smsProviders`).
 */
export function loadEnv(cwd = process.cwd(), env: Env = process.env, smsProviders: SmsProviders = SMS_PROVIDERS): Env {
  const known = [...SERVICE_CONFIG_KEYS, ...smsProviders.keys];
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
    if (!known.includes(key) && !isOAuthProviderKey(key)) {
      return void problems.push(`.env line ${i + 1}: unknown setting ${key} (known: ${known.join(', ')})`);
    }
    fromFile[key] = value;
  });
  if (problems.length) throw new ConfigError(problems);
  return { ...fromFile, ...env };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Validates every setting and reports all problems at once. `smsProviders`: the SMS providers
 * SMS_PROVIDER may name (the service's own folder unless a test gives another).
 */
export function parseConfig(env: Env, opts: { smsProviders?: SmsProviders } = {}): Config {
  const problems: string[] = [];
  // Any variable (an SMS provider's are only known at run time); `get` for the service's own, typo-checked.
  const read = (k: string): string | undefined => {
    const v = env[k];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const get = (k: ConfigKey): string | undefined => read(k);
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
  const nodeInternalUrl = internalUrl(get('NODE_INTERNAL_URL'), problems);
  const takeoverRelay = get('TAKEOVER_RELAY') || 'process';
  if (takeoverRelay !== 'process' && takeoverRelay !== 'inline') problems.push(`TAKEOVER_RELAY must be process or inline, got "${takeoverRelay}"`);
  const wbaAgentDomain = agentDomain(get('WBA_AGENT_DOMAIN'), problems);
  const agentPackage = get('AGENT_PACKAGE') || null;
  if (agentPackage !== null && !isAgentPackageName(agentPackage)) {
    problems.push(`AGENT_PACKAGE must be an npm package name such as @mandate/agent (optionally @version), got "${agentPackage}"`);
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

  const outboundAllowLoopback = bool('OUTBOUND_ALLOW_LOOPBACK', false);
  const config: Config = {
    port,
    host,
    baseUrl,
    nodeInternalUrl,
    takeoverRelay: takeoverRelay === 'inline' ? 'inline' : 'process',
    wbaAgentDomain,
    agentPackage,
    databaseUrl,
    dataDir: resolve(get('DATA_DIR') ?? './data'),
    adminEmails,
    keyEncryptionKey,
    keyRotationGraceSec: int('KEY_ROTATION_GRACE_SECONDS', 86400, 0, 30 * 86400),
    logLevel,
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    trustProxy: parseTrustProxy(get('TRUST_PROXY'), problems),
    rpName: get('RP_NAME') ?? 'Mandate',
    loginThrottle: {
      perAccount: int('LOGIN_MAX_PER_ACCOUNT', 10, 1, 10000),
      perAddress: int('LOGIN_MAX_PER_ADDRESS', 50, 1, 100000),
      windowSec: int('LOGIN_WINDOW_SECONDS', 900, 1, 86400),
    },
    housekeepingIntervalSec: int('HOUSEKEEPING_INTERVAL_SECONDS', 600, 1, 86400),
    outboundAllowLoopback,
    vapid: vapidKeys(get('VAPID_PUBLIC_KEY'), get('VAPID_PRIVATE_KEY'), problems),
    vapidSubject: vapidSubject(get('VAPID_SUBJECT'), baseUrl, problems),
    pushServiceHosts: pushServiceHosts(get('PUSH_SERVICE_HOSTS'), problems),
    fcm: fcmSettings(get, problems),
    android: androidSettings(get, problems),
    outboxPollMs: int('OUTBOX_POLL_MS', 2000, 50, 600_000),
    outboxClaimSec: int('OUTBOX_CLAIM_SECONDS', 60, 10, 3600),
    revocationEvents: {
      keepAliveMs: int('REVOCATION_KEEPALIVE_MS', 15_000, 100, 600_000),
      maxBufferBytes: int('REVOCATION_STREAM_BUFFER_BYTES', 1024 * 1024, 1024, 256 * 1024 * 1024),
      heldDeltas: int('REVOCATION_HELD_DELTAS', 1000, 1, 100_000),
      maxStreams: int('REVOCATION_MAX_STREAMS', 20_000, 1, 1_000_000),
      maxStreamsPerAddress: int('REVOCATION_MAX_STREAMS_PER_ADDRESS', 1000, 1, 1_000_000),
      maxStreamsPerNetwork: int('REVOCATION_MAX_STREAMS_PER_NETWORK', 4000, 1, 1_000_000),
    },
    mail: mailSettings(get('SMTP_URL'), get('MAIL_FROM'), baseUrl, problems),
    sms: smsSettings(opts.smsProviders ?? SMS_PROVIDERS, read, problems),
    metrics: get('METRICS_PORT') === undefined ? null : { port: int('METRICS_PORT', 0, 1, 65535), host: get('METRICS_HOST') ?? '127.0.0.1' },
    oauthProviders: parseOAuthProviders(env, outboundAllowLoopback, problems),
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** NODE_INTERNAL_URL: an http(s) origin, optionally with a path, as the other nodes reach this one. */
function internalUrl(value: string | undefined, problems: string[]): string | null {
  if (value === undefined || value === '') return null;
  try {
    const u = new URL(value);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash || u.username || u.password) throw new Error();
    return u.origin + u.pathname.replace(/\/+$/, '');
  } catch {
    problems.push(`NODE_INTERNAL_URL must be this node's http(s) address as the other nodes reach it, such as http://10.0.0.5:8080 (no query, fragment or credentials), got "${value}"`);
    return null;
  }
}

/** WBA_AGENT_DOMAIN: a DNS name of two labels or more (lower-cased), no scheme, port or path. */
function agentDomain(value: string | undefined, problems: string[]): string | null {
  if (value === undefined || value === '') return null;
  const name = value.toLowerCase().replace(/\.$/, '');
  const label = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
  if (name.length <= 240 && new RegExp(`^${label}(?:\\.${label})+$`).test(name)) return name;
  problems.push(`WBA_AGENT_DOMAIN must be a domain name such as agents.example.com (no scheme, port or path; agents get https://a-<12 hex>.<domain>), got "${value}"`);
  return null;
}

/** Settings that are fine on a laptop and dangerous in production; printed loudly at start. */
export function unsafeDefaults(config: Config): string[] {
  const warnings: string[] = [];
  const url = new URL(config.baseUrl);
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !local) warnings.push(`BASE_URL ${config.baseUrl} is not https: passkeys and cookies are unsafe`);
  if (!config.keyEncryptionKey) warnings.push('KEY_ENCRYPTION_KEY is not set: private signing keys are stored unencrypted');
  if (config.adminEmails.size === 0) warnings.push('ADMIN_EMAILS is empty: nobody can rotate keys or administer operators');
  if (config.trustProxy.kind === 'all') warnings.push('TRUST_PROXY=true believes every X-Forwarded-For entry: any client can forge its address and get a fresh allowance from every per-address limit (sign-in, sign-up); set the number of proxies in front (TRUST_PROXY=1) or their addresses instead');
  if (config.outboundAllowLoopback) warnings.push('OUTBOUND_ALLOW_LOOPBACK is on: push endpoints and other outbound fetches may reach http: and this machine (tests and development only)');
  if (local) warnings.push(`BASE_URL is ${config.baseUrl}: development only; set BASE_URL to the public https address`);
  return warnings;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** Both VAPID keys or neither: base64url, a 65-byte uncompressed P-256 point and a 32-byte scalar. */
function vapidKeys(publicKey: string | undefined, privateKey: string | undefined, problems: string[]): Config['vapid'] {
  if (publicKey === undefined && privateKey === undefined) return null;
  if (publicKey === undefined || privateKey === undefined) {
    problems.push('VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY go together: set both (`npx web-push generate-vapid-keys`) or neither (generated and kept in the database)');
    return null;
  }
  const bytes = (v: string) => (B64URL.test(v) ? Buffer.from(v, 'base64url').length : -1);
  if (bytes(publicKey) !== 65) problems.push('VAPID_PUBLIC_KEY must be base64url of a 65-byte uncompressed P-256 public key');
  if (bytes(privateKey) !== 32) problems.push('VAPID_PRIVATE_KEY must be base64url of a 32-byte P-256 private key');
  return { publicKey, privateKey };
}

/** PUSH_SERVICE_HOSTS: comma-separated hosts or `*.domain` patterns; `*` alone: any host. */
function pushServiceHosts(raw: string | undefined, problems: string[]): Config['pushServiceHosts'] {
  if (raw === undefined) return DEFAULT_PUSH_SERVICE_HOSTS;
  if (raw === '*') return null;
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  for (const h of hosts) if (!isPushHostPattern(h)) problems.push(`PUSH_SERVICE_HOSTS: "${h}" is not a host name or *.domain pattern (or set * alone for any host)`);
  if (hosts.length === 0) problems.push('PUSH_SERVICE_HOSTS is empty: list the accepted push service hosts, or * for any');
  return hosts;
}

/** RFC 8292 `sub`: the operator's contact. Defaults to the https base URL, else a mailto: at its host. */
function vapidSubject(raw: string | undefined, baseUrl: string, problems: string[]): string {
  if (raw !== undefined) {
    if (!/^mailto:[^@\s]+@[^@\s]+$/.test(raw) && !/^https:\/\/[^\s]+$/.test(raw)) problems.push(`VAPID_SUBJECT must be a mailto: address or an https: URL, got "${raw}"`);
    return raw;
  }
  try {
    const url = new URL(baseUrl);
    return url.protocol === 'https:' ? url.origin : `mailto:push@${url.hostname}`;
  } catch {
    return 'mailto:push@localhost';
  }
}

function httpUrl(k: ConfigKey, raw: string, problems: string[]): string {
  try {
    const u = new URL(raw);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') problems.push(`${k} must be an http(s) URL, got "${raw}"`);
  } catch {
    problems.push(`${k} is not a URL: "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function fcmSettings(get: (k: ConfigKey) => string | undefined, problems: string[]): Config['fcm'] {
  const projectId = get('FCM_PROJECT_ID');
  const file = get('FCM_SERVICE_ACCOUNT_FILE');
  if (projectId === undefined) {
    for (const k of ['FCM_SERVICE_ACCOUNT_FILE', 'FCM_API_BASE', 'FCM_TOKEN_URL'] as const) {
      if (get(k) !== undefined) problems.push(`${k} is set but FCM_PROJECT_ID is not: set FCM_PROJECT_ID and FCM_SERVICE_ACCOUNT_FILE to send Android pushes`);
    }
    return null;
  }
  if (!/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(projectId)) problems.push(`FCM_PROJECT_ID must be a Firebase project id (lower-case letters, digits, hyphens), got "${projectId}"`);
  if (file === undefined) {
    problems.push('FCM_PROJECT_ID is set but FCM_SERVICE_ACCOUNT_FILE is not: the path of the service-account JSON key from the Firebase console');
    return null;
  }
  if (!existsSync(file)) problems.push(`FCM_SERVICE_ACCOUNT_FILE: no file at ${file}`);
  return {
    projectId,
    serviceAccountFile: resolve(file),
    apiBase: httpUrl('FCM_API_BASE', get('FCM_API_BASE') ?? 'https://fcm.googleapis.com', problems),
    tokenUrl: httpUrl('FCM_TOKEN_URL', get('FCM_TOKEN_URL') ?? 'https://oauth2.googleapis.com/token', problems),
  };
}

function androidSettings(get: (k: ConfigKey) => string | undefined, problems: string[]): Config['android'] {
  const packageName = get('ANDROID_PACKAGE_NAME') ?? null;
  if (packageName !== null && !/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/.test(packageName)) problems.push(`ANDROID_PACKAGE_NAME must be a Java package name such as com.example.mandate, got "${packageName}"`);
  const certSha256 = (get('ANDROID_CERT_SHA256') ?? '').split(',').map((c) => c.trim().toUpperCase()).filter(Boolean);
  for (const c of certSha256) if (!/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/.test(c)) problems.push(`ANDROID_CERT_SHA256: "${c}" is not a SHA-256 fingerprint (32 hex pairs separated by colons)`);
  const apkPath = get('ANDROID_APK_PATH') ?? null;
  return { packageName, certSha256, apkPath: apkPath === null ? null : resolve(apkPath) };
}

/** SMTP_URL as nodemailer takes it (smtp: or smtps:); MAIL_FROM defaults to no-reply at the public host. */
function mailSettings(smtpUrl: string | undefined, from: string | undefined, baseUrl: string, problems: string[]): Config['mail'] {
  if (smtpUrl !== undefined && !/^smtps?:\/\/[^/]/.test(smtpUrl)) problems.push('SMTP_URL must start with smtp:// or smtps:// (for example smtps://user:pass@smtp.example.com)');
  let host = 'localhost';
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    // BASE_URL's own problem is reported already.
  }
  const sender = from ?? `Mandate <no-reply@${host}>`;
  if (!/@[^@\s>]+/.test(sender)) problems.push(`MAIL_FROM must hold an email address, got "${sender}"`);
  return { smtpUrl: smtpUrl ?? null, from: sender };
}
