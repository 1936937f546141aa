// Builds the workspace packages to dist/ (`tsc -b`, as `npm run build` does) when a build is missing
// or older than its sources, and the SDK tarballs the service offers (build-downloads.mjs) when they
// are missing or older than what they pack. Used by `npm start` and by the tests that start the built service, so a
// fresh clone, a pulled commit or an edited source never runs stale JavaScript. Plain JavaScript: it
// runs before anything is built.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildDownloads, downloadsStale } from './build-downloads.mjs';
import { buildWordpress, wordpressStale } from './build-wordpress.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The build's roots; tsc -b follows their references (protocol, web). */
export const BUILD_CONFIGS = ['packages/server/tsconfig.build.json', 'packages/site/tsconfig.build.json', 'packages/agent/tsconfig.build.json'];
/** Every package those builds make. */
export const PACKAGES = ['protocol', 'web', 'server', 'site', 'agent'];

/** The newest modification time (ms) of the files under `dir`. */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The packages whose build is missing or older than one of its inputs (sources, package.json,
 * tsconfigs). `root` is the repository (a folder ending in `/`).
 */
export function staleBuilds(root = ROOT) {
  const shared = statSync(`${root}tsconfig.base.json`).mtimeMs;
  return PACKAGES.filter((name) => {
    const dir = `${root}packages/${name}`;
    const info = `${dir}/dist/.tsbuildinfo`;
    if (!existsSync(info)) return true;
    const inputs = Math.max(shared, newestUnder(`${dir}/src`), ...['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(`${dir}/${f}`).mtimeMs));
    return inputs > statSync(info).mtimeMs;
  });
}

/** Builds when needed; returns whether it built. Throws with tsc's exit status when the build fails. */
export function ensureBuilt() {
  const compiled = compileIfStale();
  // The plugin's zip depends on the plugin's PHP files only.
  if (wordpressStale()) {
    process.stderr.write('mandate: packing the WordPress plugin for /download/wordpress ...\n');
    buildWordpress();
  }
  // After tsc: a package it rebuilt is newer than the tarballs made from it.
  if (!downloadsStale()) return compiled;
  process.stderr.write('mandate: packing the SDK tarballs for /download/agent and /download/site ...\n');
  buildDownloads();
  return true;
}

function compileIfStale() {
  const stale = staleBuilds();
  if (stale.length === 0) return false;
  let tsc;
  try {
    tsc = createRequire(`${ROOT}package.json`).resolve('typescript/bin/tsc');
  } catch {
    throw new Error('the build in packages/*/dist is missing or out of date, and TypeScript is not installed to make it: run `npm ci` (with dev dependencies)');
  }
  process.stderr.write(`mandate: building ${stale.join(', ')} (out of date) ...\n`);
  const run = spawnSync(process.execPath, [tsc, '-b', ...BUILD_CONFIGS], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`the build failed (tsc exit ${run.status ?? run.signal}); fix the errors above, or run \`npm run build\` to see them again`);
  // tsc leaves a build alone when its output would not change (an edit that changed no code, or a
  // package.json it does not read): mark it current, so the next start does not check again.
  const now = new Date();
  for (const name of stale) utimesSync(`${ROOT}packages/${name}/dist/.tsbuildinfo`, now, now);
  return true;
}
