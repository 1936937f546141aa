/**
 * The SMS transport port (decisions §14): one SmsSender per configured provider (SMS_PROVIDER), built
 * from the provider registry (sms-providers.ts). Adding a provider is one new file that exports an
 * SmsProvider, plus its line in the registry and its variables in config/keys.ts.
 */
import type { ConfigKey } from '../config/keys.ts';
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

/** One provider: the variables it reads, how they are checked at start, and its sender. */
export interface SmsProvider<Settings> {
  /** Its variables (all listed in config/keys.ts); setting one without SMS_PROVIDER naming it is refused. */
  readonly keys: readonly ConfigKey[];
  /** Reads and checks the variables, adding a readable line to `problems` for each missing or bad one. */
  settings(get: (k: ConfigKey) => string | undefined, problems: string[]): Settings;
  sender(settings: Settings, deps: { clock: { now(): number } }): SmsSender;
}
