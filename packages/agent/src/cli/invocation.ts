import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { agentProgramFrom } from '@mandate/protocol/agent-command';

/**
 * How to run this CLI again from where it runs, for the commands it prints ("record it with …"):
 * - `mandate-agent` when that name on PATH is this very program (a global install or a link of
 *   one's own; the `node_modules/.bin` that npx and npm scripts put on PATH does not count);
 * - `npx --yes --package=<spec> mandate-agent` when npx fetched this program from `<spec>` (the
 *   command the owner app prints, decisions §26: it lives in npm's `_npx` cache and npm passes the
 *   spec in `npm_config_package`): the same line runs it again from anywhere;
 * - `npx mandate-agent` when a `node_modules/.bin/mandate-agent` in this directory or above is
 *   this program (a checkout, or a project that installed it): npx finds it there;
 * - else `node <path of the script>`, which works anywhere.
 * A bare `mandate-agent` in a checkout would be "command not found".
 */
export function programFor(script: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const self = real(script);
  if (!script || !self) return 'mandate-agent';
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (!dir || isBinOfNodeModules(dir)) continue;
    if (real(join(dir, 'mandate-agent')) === self) return 'mandate-agent';
  }
  const spec = env['npm_config_package'];
  if (spec && !/\s/.test(spec) && self.split(sep).includes('_npx')) return agentProgramFrom(spec);
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (real(join(dir, 'node_modules', '.bin', 'mandate-agent')) === self) return 'npx mandate-agent';
    if (dirname(dir) === dir) break;
  }
  const rel = relative(cwd, script);
  const shown = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : script;
  return `node ${shellQuote(shown)}`;
}

const COMMAND_NAMES = ['init', 'pair', 'set-id', 'whoami', 'status', 'request', 'wait', 'token', 'call', 'stepup', 'notify', 'report-status'];
// Not after `npx` or `--package=<spec>`: the command there is written as it runs already.
const PRINTED_COMMAND = new RegExp(`(?<!npx|--package=\\S+)(^|[\\s(\`'"])mandate-agent (?=(?:${COMMAND_NAMES.join('|')})\\b|--help)`, 'g');

/**
 * `text` with every `mandate-agent <command>` written as `program <command>`: the CLI's messages
 * (and those of the SDK it prints, such as "run: mandate-agent init …") name the canonical program;
 * what reaches the person is what works here.
 */
export function withProgram(text: string, program: string): string {
  return program === 'mandate-agent' ? text : text.replace(PRINTED_COMMAND, (_m, before: string) => `${before}${program} `);
}

export function shellQuote(s: string): string {
  return /^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function isBinOfNodeModules(dir: string): boolean {
  return dir.split(sep).slice(-2).join('/') === 'node_modules/.bin';
}

function real(path: string | undefined): string | undefined {
  if (!path || !existsSync(path)) return undefined;
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
