/**
 * The SMS providers the service knows, found at start in the folder sms-providers/ next to this
 * file: each module there exporting `smsProvider` (sms-port.ts) is one, under the name it declares
 * (its file's name). Nothing lists them, so a new provider is one new file. Under tsx the folder
 * holds the TypeScript sources; in the build (`npm start`, dist/) the compiled .js files: the
 * modules read are those with this file's own extension, so each run loads one kind only.
 */
import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SmsProvider, SmsResult, SmsSender, SmsSetting } from './sms-port.ts';

/** A provider's name: what SMS_PROVIDER takes, and the prefix of its variables. */
const NAME = /^[a-z][a-z0-9]{0,31}$/;
const KEY = /^[A-Z][A-Z0-9_]*$/;

/** SMS_PROVIDER's choice as configuration holds it (config.ts). */
export interface ConfiguredSms {
  provider: string;
  /** What the provider's `configure` made of its values. */
  settings: unknown;
  /** The values of its secret settings, to keep out of logs. */
  secrets: readonly string[];
}

export class SmsProviders {
  private readonly byName: ReadonlyMap<string, SmsProvider>;

  constructor(providers: readonly SmsProvider[]) {
    this.byName = new Map(providers.map((p) => [p.name, p]));
  }

  /** The names SMS_PROVIDER takes, sorted. */
  get names(): string[] {
    return [...this.byName.keys()].sort();
  }

  get(name: string): SmsProvider | undefined {
    return this.byName.get(name);
  }

  /** Every provider's variables, provider by provider: the configuration keys beyond the service's own. */
  get keys(): string[] {
    return this.names.flatMap((n) => this.byName.get(n)?.settings.map((s) => s.key) ?? []);
  }

  /**
   * The sender of the configured provider. Whatever the provider's own care, the values of its secret
   * settings are taken out of every result's detail here too: details go to the log and the outbox.
   */
  sender(sms: ConfiguredSms, deps: { clock: { now(): number } }): SmsSender {
    const provider = this.byName.get(sms.provider);
    if (!provider) throw new Error(`no SMS provider named "${sms.provider}"`);
    const inner = provider.sender(sms.settings, deps);
    // Short values would redact ordinary words; a real credential is longer.
    const secrets = sms.secrets.filter((x) => x.length >= 4);
    return {
      async send(message) {
        const result: SmsResult = await inner.send(message);
        if (!('detail' in result)) return result;
        return { ...result, detail: secrets.reduce((t, x) => t.split(x).join('[redacted]'), result.detail) };
      },
    };
  }
}

/** Checks one module's export, so a broken provider file stops the start with its name and what is wrong. */
function checkProvider(exported: unknown, file: string, taken: ReadonlySet<string>): SmsProvider {
  const where = `SMS provider file ${file}`;
  if (!exported || typeof exported !== 'object') throw new Error(`${where} does not export \`smsProvider\` (see sms-port.ts)`);
  const p = exported as Partial<SmsProvider>;
  const base = file.slice(0, -extname(file).length);
  if (typeof p.name !== 'string' || !NAME.test(p.name)) throw new Error(`${where}: name must be lower-case letters and digits (what SMS_PROVIDER takes)`);
  if (p.name !== base) throw new Error(`${where}: its name "${p.name}" must be its file's name ("${base}")`);
  if (taken.has(p.name)) throw new Error(`${where}: a provider named "${p.name}" is loaded already`);
  if (typeof p.configure !== 'function' || typeof p.sender !== 'function') throw new Error(`${where}: configure and sender must be functions`);
  if (!Array.isArray(p.settings)) throw new Error(`${where}: settings must be a list`);
  const prefix = `${p.name.toUpperCase()}_`;
  const seen = new Set<string>();
  for (const s of p.settings as unknown[]) {
    const setting = (s ?? {}) as Partial<SmsSetting>;
    const key = String(setting.key);
    if (!KEY.test(key) || !key.startsWith(prefix)) throw new Error(`${where}: setting "${key}" must be upper case and start with ${prefix}`);
    if (seen.has(key)) throw new Error(`${where}: setting ${key} is listed twice`);
    seen.add(key);
    if (typeof setting.about !== 'string' || setting.about.trim() === '') throw new Error(`${where}: setting ${key} needs an \`about\` (what goes there)`);
    if (setting.required && setting.default !== undefined) throw new Error(`${where}: setting ${key} is required and has a default; choose one`);
    if (setting.check !== undefined && typeof setting.check !== 'function') throw new Error(`${where}: setting ${key}: check must be a function`);
  }
  return p as SmsProvider;
}

/**
 * Loads every provider module of `folder` (a file: URL ending in `/`). Files starting with `.` or
 * `_` are skipped (a helper shared by providers may live there); declaration files too.
 */
export async function loadSmsProviders(folder: URL): Promise<SmsProviders> {
  const ext = extname(fileURLToPath(import.meta.url));
  const files = readdirSync(folder)
    .filter((f) => f.endsWith(ext) && !f.endsWith(`.d${ext}`) && !f.startsWith('.') && !f.startsWith('_'))
    .sort();
  const providers: SmsProvider[] = [];
  const taken = new Set<string>();
  for (const file of files) {
    const module = (await import(new URL(file, folder).href)) as { smsProvider?: unknown };
    const provider = checkProvider(module.smsProvider, file, taken);
    taken.add(provider.name);
    providers.push(provider);
  }
  return new SmsProviders(providers);
}

/** The service's providers: those of ./sms-providers/, loaded once when this module is first imported. */
export const SMS_PROVIDERS: SmsProviders = await loadSmsProviders(new URL('./sms-providers/', import.meta.url));
