// The WordPress plugin's zip, served at /download/wordpress (decisions §23): integrations/wordpress
// packed as `mandate/…` (the folder WordPress installs it into), named after the version in the
// plugin's header, into packages/server/dist/wordpress. Run by `npm run build` (build-downloads.mjs)
// and by build-if-stale when the zip is missing or older than the plugin's files. Plain JavaScript
// with no dependency: a ZIP of stored files compressed with deflate (zlib), written here, since a
// fresh machine may have no `zip` program.
import { deflateRawSync, crc32 } from 'node:zlib';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The plugin's folder in the repository. */
export const PLUGIN_DIR = 'integrations/wordpress';
/** Where the server finds the zips (packages/server/src/downloads/wordpress-zip.ts). */
export const WORDPRESS_DIR = 'packages/server/dist/wordpress';
/** The folder name inside the zip, which WordPress installs the plugin under. */
const SLUG = 'mandate';

/** The `Version:` of the plugin header in mandate.php. */
export function pluginVersion(root = ROOT) {
  const header = readFileSync(join(root, PLUGIN_DIR, 'mandate.php'), 'utf8').slice(0, 8192);
  const version = /^\s*\*\s*Version:\s*([0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?)\s*$/m.exec(header)?.[1];
  if (!version) throw new Error(`${PLUGIN_DIR}/mandate.php: its plugin header has no "Version: x.y.z"`);
  return version;
}

/** The plugin's files (relative paths with `/`), sorted, so that the same files make the same zip. */
export function pluginFiles(root = ROOT) {
  const base = join(root, PLUGIN_DIR);
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.name.startsWith('.')) return [];
    return e.isDirectory() ? walk(path) : e.isFile() ? [relative(base, path).split(sep).join('/')] : [];
  });
  return walk(base).sort();
}

/** The zip's file name for a version. */
export const zipName = (version) => `mandate-wordpress-${version}.zip`;

/** Whether the zip of the current version is missing or older than a plugin file. */
export function wordpressStale(root = ROOT) {
  const zip = join(root, WORDPRESS_DIR, zipName(pluginVersion(root)));
  if (!existsSync(zip)) return true;
  const built = statSync(zip).mtimeMs;
  return pluginFiles(root).some((f) => statSync(join(root, PLUGIN_DIR, f)).mtimeMs > built);
}

/** A ZIP (APPNOTE 6.3) of `entries` ([name, bytes]); fixed times (1 Jan 2020), so equal input, equal bytes. */
export function zip(entries) {
  const DOS_TIME = 0;
  const DOS_DATE = ((2020 - 1980) << 9) | (1 << 5) | 1;
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const packed = deflateRawSync(data, { level: 9 });
    const [method, body] = packed.length < data.length ? [8, packed] : [0, data];
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // -rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** Builds dist/wordpress/mandate-wordpress-<version>.zip; answers its file name and version. */
export function buildWordpress(root = ROOT) {
  const version = pluginVersion(root);
  const entries = pluginFiles(root).map((f) => [`${SLUG}/${f}`, readFileSync(join(root, PLUGIN_DIR, f))]);
  const out = join(root, WORDPRESS_DIR);
  mkdirSync(out, { recursive: true });
  const file = zipName(version);
  // Written whole, then renamed: the service never reads half a zip.
  const partial = join(out, `${file}.partial-${process.pid}`);
  writeFileSync(partial, zip(entries));
  renameSync(partial, join(out, file));
  return { file, version };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { file } = buildWordpress();
  process.stdout.write(`WordPress plugin in ${WORDPRESS_DIR}/${file}\n`);
}
