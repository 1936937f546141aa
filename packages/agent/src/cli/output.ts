import { MandateError } from '../client/errors.ts';
import { UsageError } from './exit-codes.ts';

/**
 * Where the CLI writes. Results go to stdout: human text, or with `--json` exactly one JSON object
 * per command. Progress, notes and error explanations go to stderr, so stdout stays parseable.
 */
export class Output {
  constructor(
    readonly json: boolean,
    readonly stdout: NodeJS.WriteStream = process.stdout,
    readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {}

  /** The command's result: `human` lines, or `data` as JSON with --json. */
  result(human: string | string[], data: Record<string, unknown>): void {
    if (this.json) this.stdout.write(`${JSON.stringify(data)}\n`);
    else this.stdout.write(`${(Array.isArray(human) ? human : [human]).join('\n')}\n`);
  }

  /** A note for the human (stderr, also with --json). */
  note(line: string): void {
    this.stderr.write(`${line}\n`);
  }

  /** Reports a failure: a human explanation on stderr, and with --json `{"error": {...}}` on stdout. */
  error(e: unknown): void {
    const program = 'mandate-agent';
    if (e instanceof MandateError) {
      this.stderr.write(`${program}: ${e.method && e.path ? `${e.method} ${e.path}: ` : ''}${e.status ? `${e.status} ` : ''}${e.detail}\n`);
      if (e.nextStep) this.stderr.write(`next step: ${e.nextStep}\n`);
      if (this.json) this.stdout.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
      return;
    }
    const message = e instanceof Error ? e.message : String(e);
    this.stderr.write(`${program}: ${message}\n`);
    if (e instanceof UsageError) this.stderr.write(`see: ${program} ${e.command ? `${e.command} ` : ''}--help\n`);
    if (this.json) {
      const code = e instanceof UsageError ? 'usage' : e instanceof Error && e.name === 'SiteUnreachableError' ? 'site_unreachable' : e instanceof Error && e.name === 'Interrupted' ? 'interrupted' : 'error';
      this.stdout.write(`${JSON.stringify({ error: { code, detail: message } })}\n`);
    }
  }
}
