import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode } from '../../../packages/server/test/helpers/child-process.ts';

/**
 * The agent as the real `mandate-agent` CLI: every command a child process of
 * `packages/agent/bin/mandate-agent.js` with `--dir` (the agent's own temp directory) and `--json`
 * (one JSON object on stdout, documented exit codes), as a script driving an agent would run it.
 */

const BIN = 'packages/agent/bin/mandate-agent.js';
/** No command may hang the suite: a child still running after this is killed (and the test fails on its exit code). */
const COMMAND_LIMIT_MS = 120_000;

export type CliResult = {
  args: string[];
  /** The exit code (null when killed). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed (`--json` prints exactly one object), or undefined if it is not JSON. */
  json: Record<string, unknown> | undefined;
};

/** One line for assertion messages. */
export function show(r: CliResult): string {
  return `mandate-agent ${r.args.join(' ')} -> exit ${r.code}\nstdout: ${r.stdout.trim()}\nstderr: ${r.stderr.trim()}`;
}

export class AgentCli {
  private constructor(
    readonly dir: string,
    readonly agentId: string,
  ) {}

  /** A fresh agent directory, key and registration: `init --email` signed in as the owner. */
  static init(serviceUrl: string, owner: { email: string; password: string }, name: string): Promise<AgentCli> {
    return AgentCli.register(['init', '--service', serviceUrl, '--name', name, '--email', owner.email], { MANDATE_PASSWORD: owner.password });
  }

  /** A fresh agent directory paired with the one-time code the owner app showed (`pair CODE`): no owner password on the agent's side. */
  static pair(serviceUrl: string, code: string, name: string): Promise<AgentCli> {
    return AgentCli.register(['pair', code, '--service', serviceUrl, '--name', name], {});
  }

  /** Runs a registering command (`init`, `pair`) in a new directory; answers the agent it registered. */
  private static async register(args: string[], env: Record<string, string>): Promise<AgentCli> {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-e2e-agent-'));
    const r = await runCli(dir, args, env);
    const agentId = r.json?.['agent_id'];
    if (r.code !== 0 || typeof agentId !== 'string') {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${args[0] ?? 'registration'} failed: ${show(r)}`);
    }
    return new AgentCli(dir, agentId);
  }

  /** Runs one command to its end. */
  run(...args: string[]): Promise<CliResult> {
    return runCli(this.dir, args);
  }

  /** What the CLI keeps for a site (`state/<site>.json`): read by the test to check the refresh rotation. */
  siteState(site: string): { accessToken: string; refreshToken: string } {
    const file = JSON.parse(readFileSync(join(this.dir, 'state', `${site}.json`), 'utf8')) as { state: { accessToken: string; refreshToken: string } };
    return file.state;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function runCli(dir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const all = [...args, '--dir', dir, '--json'];
  const child = runNode(`mandate-agent ${args[0] ?? ''}`, [BIN, ...all], { env });
  const limit = setTimeout(() => void child.stop(), COMMAND_LIMIT_MS);
  const code = await child.exited;
  clearTimeout(limit);
  const stdout = child.stdout();
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(stdout);
    if (typeof parsed === 'object' && parsed !== null) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { args, code, stdout, stderr: child.stderr(), json };
}
