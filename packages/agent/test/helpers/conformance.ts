import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE22, node22Version } from '../../../../scripts/node22.mjs';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, a devDependency of this
 * package) run against a server: `conformance server --url <url> --scenario <name> -o <dir>` under the
 * Node 22 that `npm run test:setup` installs (the suite needs Node 22+), its checks read back from the
 * checks.json it writes.
 */

const CLI = fileURLToPath(new URL('../../../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));

export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  /** SUCCESS and FAILURE count; WARNING fails the suite's own summary too; INFO is a note. */
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO';
  errorMessage?: string;
  details?: unknown;
}

export interface ScenarioRun {
  scenario: string;
  exitCode: number;
  checks: ConformanceCheck[];
  /** What the suite printed (its pretty summary), for failure messages. */
  output: string;
}

/** The Node 22 binary; an error telling how to install it when `npm run test:setup` has not run. */
export function conformanceNode(): string {
  if (!node22Version()) throw new Error(`no Node 22 at ${NODE22}: run \`npm run test:setup\` (the MCP conformance suite needs Node 22+)`);
  return NODE22;
}

/** Runs one server scenario of the suite against `url` (at most 60 s). */
export async function runScenario(url: string, scenario: string): Promise<ScenarioRun> {
  const node = conformanceNode();
  const out = mkdtempSync(join(tmpdir(), 'mandate-mcp-conformance-'));
  try {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(node, [CLI, 'server', '--url', url, '--scenario', scenario, '-o', out], { timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      });
    });
    // The suite writes <out>/server-<scenario>-<timestamp>/checks.json.
    const dir = readdirSync(out).find((d) => d.startsWith(`server-${scenario}-`));
    const file = dir ? join(out, dir, 'checks.json') : '';
    const checks = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ConformanceCheck[]) : [];
    return { scenario, exitCode: code, checks, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The checks that did not pass (FAILURE or WARNING), as lines for an assertion message. */
export function problems(run: ScenarioRun): string[] {
  return run.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? c.description}`);
}
