/**
 * The SMS transport port (decisions §14): one SmsSender for the configured provider (SMS_PROVIDER).
 * A provider is one file in sms-providers/ exporting `smsProvider`: its name, its settings (the
 * variables it reads, with defaults, which are secret and how each is checked) and its sender. The
 * registry (sms-providers.ts) finds the files at start; configuration, .env loading and the start
 * checks take every provider's settings from there, so nothing else lists providers.
 */
import type { Sms } from '../domain/sms/sms-queue.ts';
import type { SendResult } from './push-port.ts';

export type { Sms } from '../domain/sms/sms-queue.ts';

/**
 * `sent`: accepted by the provider. `retry`: a passing failure (429 with its Retry-After, 5xx,
 * timeout, network, credentials the operator may yet fix). `failed`: refused for good (a number the
 * provider will not send to). SMS has no `gone`.
 */
export type SmsResult = Exclude<SendResult, { outcome: 'gone' }>;

export interface SmsSender {
  send(sms: Sms): Promise<SmsResult>;
}

/** One variable a provider reads. */
export interface SmsSetting {
  /** Upper case and starting with the provider's name: TWILIO_FROM for `twilio` (no clash with the service's own). */
  readonly key: string;
  /** What goes there; the start names it when a required one is missing ("SMS_PROVIDER=twilio needs TWILIO_FROM: <about>"). */
  readonly about: string;
  /** Needed once SMS_PROVIDER names the provider. A required setting has no default. */
  readonly required?: boolean;
  /** The value when unset. */
  readonly default?: string;
  /** A credential: never shown in a start problem, and taken out of every send result's detail. */
  readonly secret?: boolean;
  /** A problem with a set value, worded to follow the key ("must be ..."); undefined when it is fine. */
  check?(value: string): string | undefined;
}

/** One provider, as a file of sms-providers/ exports it (`export const smsProvider`). */
export interface SmsProvider<Settings = unknown> {
  /** What SMS_PROVIDER says to choose it; the file is named after it (twilio.ts). */
  readonly name: string;
  readonly settings: readonly SmsSetting[];
  /**
   * The values once every check passed (set ones trimmed, defaults filled in; an unset optional one
   * absent) made into what `sender` takes.
   */
  configure(values: Readonly<Record<string, string>>): Settings;
  sender(settings: Settings, deps: { clock: { now(): number } }): SmsSender;
}

/** Types a provider file's export (its settings stay its own), so `configure` and `sender` agree. */
export const defineSmsProvider = <Settings>(provider: SmsProvider<Settings>): SmsProvider<Settings> => provider;
