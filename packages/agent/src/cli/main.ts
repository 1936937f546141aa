import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultAgentDir } from '../keys/key-file.ts';
import type { CliContext, Command } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { EXIT, Interrupted, UsageError, exitCodeFor } from './exit-codes.ts';
import { commandHelp, mainHelp } from './help.ts';
import { programFor, shellQuote } from './invocation.ts';
import { Output } from './output.ts';

const GLOBAL_OPTIONS = {
  dir: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Global options may come before the command: skip them (and the value of --dir) to find it. */
function splitCommand(argv: string[]): { name: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--dir') {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    return { name: a, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { name: undefined, rest: argv };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const json = argv.includes('--json');
  const out = new Output(json, process.stdout, process.stderr, programFor(process.argv[1], env, process.cwd()));
  const { name, rest } = splitCommand(argv);
  const command: Command | undefined = COMMANDS.find((c) => c.name === name);
  if (name === 'help' || name === undefined) {
    const about = COMMANDS.find((c) => c.name === rest.find((a) => !a.startsWith('-')));
    out.stdout.write(`${about ? commandHelp(about) : mainHelp()}\n`);
    return name === undefined && !argv.some((a) => a === '--help' || a === '-h') ? EXIT.usage : EXIT.ok;
  }
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Interrupted());
  process.once('SIGINT', onSigint);
  try {
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}; see mandate-agent --help`);
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...command.options }, allowPositionals: true, strict: true });
    } catch (e) {
      throw new UsageError((e as Error).message, command.name);
    }
    const { values, positionals } = parsed;
    if (values['help'] === true) {
      out.stdout.write(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    if (positionals.length < command.positionals.min || positionals.length > command.positionals.max) {
      throw new UsageError(`wrong number of arguments; usage: ${command.usage}`, command.name);
    }
    const dirFlag = typeof values['dir'] === 'string' ? values['dir'] : undefined;
    const ctx: CliContext = {
      dir: dirFlag ? resolve(dirFlag) : defaultAgentDir(env),
      dirFlag: dirFlag ? ` --dir ${shellQuote(dirFlag)}` : '',
      out,
      env,
      signal: controller.signal,
    };
    return (await command.run(ctx, values, positionals)) ?? EXIT.ok;
  } catch (e) {
    out.error(e);
    return exitCodeFor(e);
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

process.exitCode = await main(process.argv.slice(2));
