import type { Command } from './command.ts';
import { COMMANDS } from './commands/index.ts';

export const GLOBAL_HELP = `Global options:
  --dir DIR   the agent directory (default: $MANDATE_AGENT_DIR, else ~/.mandate-agent)
  --json      print one JSON object on stdout (errors as {"error": {...}}); progress stays on stderr
  -h, --help  help for a command`;

export const EXIT_HELP = `Exit codes: 0 ok; 1 refused, denied or expired; 2 usage or local setup error; 3 service or site
unreachable (or failing with 5xx); 130 interrupted while waiting.`;

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'mandate-agent: act for an owner on sites that use Mandate.',
    '',
    'Usage: mandate-agent <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    GLOBAL_HELP,
    '',
    EXIT_HELP,
    '',
    'Run `mandate-agent <command> --help` for the options of a command.',
  ].join('\n');
}

export function commandHelp(c: Command): string {
  return [`Usage: ${c.usage}`, '', c.help, '', GLOBAL_HELP].join('\n');
}
