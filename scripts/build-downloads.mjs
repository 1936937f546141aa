// The npm tarballs the service offers at /download/agent and /download/site (decisions §26), made by
// `npm run build` after tsc (and by build-if-stale when they are missing or older than the builds
// they pack), never at request time. Plain JavaScript: it runs before anything else is built.
//
// Why not `npm pack -w @mandate/agent` with `bundleDependencies`: in the workspace,
// node_modules/@mandate/protocol is a symlink to packages/protocol, and npm does not put a linked
// dependency inside the tarball. So each package is packed as npm would publish it, unpacked in a
// folder outside the repository with @mandate/protocol's own packed files as a real folder in its
// node_modules, marked `bundleDependencies`, and packed again there. Installing the result needs only
// the public registry (jose, structured-headers); @mandate/protocol comes from inside the tarball.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORDPRESS_DIR, buildWordpress } from './build-wordpress.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where the server finds them (packages/server/src/downloads/sdk-tarballs.ts). */
export const DOWNLOADS_DIR = 'packages/server/dist/tarballs';
/** What is offered: the address's name and the workspace package. */
export const DOWNLOADS = { agent: '@mandate/agent', site: '@mandate/site' };
/** The packages whose build and files a tarball holds: a newer one makes the tarballs stale. */
const PACKED = ['protocol', 'agent', 'site'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Whether the tarballs are missing or older than the builds and package files they pack. */
export function downloadsStale(root = ROOT) {
  const index = join(root, DOWNLOADS_DIR, 'index.json');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return PACKED.some((name) => ['dist/.tsbuildinfo', 'package.json', 'README.md', 'bin'].some((f) => {
    const path = join(root, 'packages', name, f);
    return existsSync(path) && statSync(path).mtimeMs > built;
  }));
}

/** `npm pack` of `cwd` (or of the workspaces named) into `into`; the tarballs' file names. */
function pack(cwd, into, workspaces = []) {
  // --ignore-scripts: the packages are built already (prepack would run tsc again).
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', into, ...workspaces.flatMap((w) => ['-w', w])];
  const out = execFileSync(npm, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out).map((p) => p.filename);
}

/** Copies `from` to `to` whole: a reader (the service, another build) never sees half a file. */
function place(from, to) {
  const partial = `${to}.partial-${process.pid}`;
  copyFileSync(from, partial);
  renameSync(partial, to);
}

function untar(file, into) {
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['xzf', file, '-C', into, '--strip-components=1']);
}

/** Packs @mandate/agent and @mandate/site with @mandate/protocol inside, into DOWNLOADS_DIR. */
export function buildDownloads(root = ROOT) {
  const work = mkdtempSync(join(tmpdir(), 'mandate-downloads-'));
  try {
    const packed = pack(root, work, ['@mandate/protocol', ...Object.values(DOWNLOADS)]);
    const protocol = join(work, packed.find((f) => f.startsWith('mandate-protocol-')));
    const out = join(root, DOWNLOADS_DIR);
    mkdirSync(out, { recursive: true });
    const index = {};
    for (const [name, pkgName] of Object.entries(DOWNLOADS)) {
      const tarball = packed.find((f) => f.startsWith(`${pkgName.slice(1).replace('/', '-')}-`));
      const dir = join(work, name);
      untar(join(work, tarball), dir);
      untar(protocol, join(dir, 'node_modules', '@mandate', 'protocol'));
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      manifest.bundleDependencies = ['@mandate/protocol'];
      // Its scripts build it from the repository (tsc), which an installer has not got.
      delete manifest.scripts;
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      const [file] = pack(dir, work);
      // The file name npm gives (mandate-agent-0.1.0.tgz) is the one the download is saved under.
      place(join(work, file), join(out, file));
      index[name] = { file, name: manifest.name, version: manifest.version };
    }
    // Written last: its presence and age stand for the whole set (downloadsStale).
    writeFileSync(join(work, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
    place(join(work, 'index.json'), join(out, 'index.json'));
    return index;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const index = buildDownloads();
  process.stdout.write(`Downloads in ${DOWNLOADS_DIR}: ${Object.values(index).map((d) => d.file).join(', ')}\n`);
  // The WordPress plugin's zip for /download/wordpress (decisions §23), built with the SDKs.
  const wordpress = buildWordpress();
  process.stdout.write(`WordPress plugin in ${WORDPRESS_DIR}/${wordpress.file}\n`);
}
