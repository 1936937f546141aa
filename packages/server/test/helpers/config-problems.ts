import { ConfigError, parseConfig } from '../../src/config/config.ts';

/** The problems parseConfig reports for `env`, or [] when it accepts it. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
}
