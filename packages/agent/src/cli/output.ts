import { AccessRequiredError, AgentRevokedError, MandateError } from '../client/errors.ts';
import { UsageError } from './exit-codes.ts';
import { withProgram } from './invocation.ts';

/**
 * Where the CLI writes. Results go to stdout: human text, or with `--json` exactly one JSON object
 * per command. Progress, notes and error explanations go to stderr, so stdout stays parseable.
 * In human text, every `mandate-agent <command>` is written as `program` runs here (invocation.ts).
 */
export class Output {
  constructor(
    readonly json: boolean,
    readonly stdout: NodeJS.WriteStream = process.stdout,
    readonly stderr: NodeJS.WriteStream = process.stderr,
    readonly program: string = 'mandate-agent',
  ) {}

  /** The command's result: `human` lines, or `data` as JSON with --json. */
  result(human: string | string[], data: Record<string, unknown>): void {
    if (this.json) this.stdout.write(`${JSON.stringify(data)}\n`);
    else this.stdout.write(`${this.human((Array.isArray(human) ? human : [human]).join('\n'))}\n`);
  }

  /** A note for the human (stderr, also with --json). */
  note(line: string): void {
    this.stderr.write(`${this.human(line)}\n`);
  }

  /** A command line to show the person, as it runs here: `program` followed by `args`. */
  command(args: string): string {
    return `${this.program} ${args}`;
  }

  private human(text: string): string {
    return withProgram(text, this.program);
  }

  /**
   * Why nothing works any more for a revoked agent, and what can be done (the owner's move), on
   * stderr: for `AgentRevokedError` and for `status` reading `revoked`. `why` is what was refused.
   */
  explainRevoked(why: string): void {
    this.stderr.write(`mandate-agent: this agent was revoked by its owner: ${this.human(why)}; Mandate issues it no pass and sites refuse the passes it holds\n`);
    this.stderr.write(`next step: only the owner can undo this: ask them to unblock the agent in the Mandate app (Agents); if they removed it, pair a new agent: ${this.command('pair --help')}\n`);
  }

  /** Reports a failure: a human explanation on stderr, and with --json `{"error": {...}}` on stdout. */
  error(e: unknown): void {
    const program = 'mandate-agent';
    if (e instanceof AgentRevokedError) {
      // As for a revoked site access: the agent's terms and the way out, with the service's words kept.
      const said = e.siteAnswer ? `the site answered ${e.siteAnswer}, and ` : '';
      this.explainRevoked(`${said}${e.method && e.path ? `${e.method} ${e.path}` : 'the service'} answered ${e.status ? `${e.status} ` : ''}${e.detail}`);
      if (this.json) this.stdout.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
      return;
    }
    if (e instanceof AccessRequiredError) {
      // Say what happened in the agent's terms, and the command that fixes it, not the raw HTTP call.
      const said = e.siteAnswer ? `the site answered ${e.siteAnswer}, and ` : '';
      this.stderr.write(`${program}: no access to ${e.site}: ${said}Mandate issues no new pass (${this.human(e.detail)})\n`);
      this.stderr.write(`next step: ask the owner again: ${this.command(`request --site ${e.site} --scopes <the scopes you need> --wait`)}\n`);
      if (this.json) this.stdout.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
      return;
    }
    if (e instanceof MandateError) {
      this.stderr.write(`${program}: ${e.method && e.path ? `${e.method} ${e.path}: ` : ''}${e.status ? `${e.status} ` : ''}${this.human(e.detail)}\n`);
      if (e.nextStep) this.stderr.write(`next step: ${this.human(e.nextStep)}\n`);
      if (this.json) this.stdout.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
      return;
    }
    const message = e instanceof Error ? e.message : String(e);
    this.stderr.write(`${program}: ${this.human(message)}\n`);
    if (e instanceof UsageError) this.stderr.write(`see: ${this.command(`${e.command ? `${e.command} ` : ''}--help`)}\n`);
    if (this.json) {
      const code = e instanceof UsageError ? 'usage' : e instanceof Error && e.name === 'SiteUnreachableError' ? 'site_unreachable' : e instanceof Error && e.name === 'Interrupted' ? 'interrupted' : 'error';
      this.stdout.write(`${JSON.stringify({ error: { code, detail: message } })}\n`);
    }
  }
}
