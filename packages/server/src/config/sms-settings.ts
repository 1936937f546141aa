import type { ConfiguredSms, SmsProviders } from '../delivery/sms-providers.ts';

/**
 * SMS_PROVIDER names a provider of the registry; the settings that provider declares are then read
 * and checked here, all at start (refused now, not at the first code hours later): a required one
 * missing, a value its check refuses. A provider's variable without SMS_PROVIDER naming it is
 * refused too: it would silently do nothing. A secret value never appears in a problem.
 */
export function smsSettings(providers: SmsProviders, get: (k: string) => string | undefined, problems: string[]): ConfiguredSms | null {
  const name = get('SMS_PROVIDER');
  for (const other of providers.names) {
    if (other === name) continue;
    for (const k of providers.get(other)?.settings.map((s) => s.key) ?? []) {
      if (get(k) !== undefined) problems.push(`${k} is set but SMS_PROVIDER is not ${other}: set SMS_PROVIDER=${other} to send text messages through it`);
    }
  }
  if (name === undefined) return null;
  const provider = providers.get(name);
  if (!provider) {
    problems.push(providers.names.length === 0
      ? `SMS_PROVIDER is set to "${name}" but no SMS provider is installed (packages/server/src/delivery/sms-providers/ is empty); unset it (text messages go to the log)`
      : `SMS_PROVIDER must be one of ${providers.names.join(', ')} (or unset: text messages go to the log), got "${name}"`);
    return null;
  }
  const before = problems.length;
  const values: Record<string, string> = {};
  const secrets: string[] = [];
  for (const setting of provider.settings) {
    const value = get(setting.key);
    if (value === undefined) {
      if (setting.required) problems.push(`SMS_PROVIDER=${name} needs ${setting.key}: ${setting.about}`);
      else if (setting.default !== undefined) values[setting.key] = setting.default;
      continue;
    }
    const problem = setting.check?.(value);
    if (problem !== undefined) problems.push(`${setting.key} ${setting.secret ? problem.split(value).join('[the value]') : problem}`);
    values[setting.key] = value;
    if (setting.secret) secrets.push(value);
  }
  if (problems.length > before) return null;
  try {
    return { provider: name, settings: provider.configure(values), secrets };
  } catch (e) {
    problems.push(`SMS_PROVIDER=${name}: its settings could not be used: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}
