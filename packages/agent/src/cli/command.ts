import type { ParseArgsConfig } from 'node:util';
import type { Output } from './output.ts';

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export type CliContext = {
  /** The agent directory (--dir, MANDATE_AGENT_DIR, ~/.mandate-agent). */
  dir: string;
  /** ` --dir <dir>` when the directory was given by flag, to repeat in printed commands; else empty. */
  dirFlag: string;
  out: Output;
  env: NodeJS.ProcessEnv;
  /** Aborted by Ctrl-C, so a wait can stop cleanly and say how to resume. */
  signal: AbortSignal;
};

export type Command = {
  name: string;
  summary: string;
  /** Full --help text after the usage line. */
  help: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Positional arguments: exact count or a range. */
  positionals: { min: number; max: number };
  /** Returns the exit code (0 when nothing is returned). */
  run(ctx: CliContext, values: OptionValues, positionals: string[]): Promise<number | void>;
};
