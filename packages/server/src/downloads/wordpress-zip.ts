// The WordPress plugin's zip served at /download/wordpress (decisions §23). Made by `npm run build`
// (scripts/build-wordpress.mjs) into dist/wordpress as mandate-wordpress-<version>.zip, never here:
// the newest version there is read once and kept in memory with its digest (some tens of kB).
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { notFound } from '../domain/errors.ts';

/** Where the build writes it: packages/server/dist/wordpress, from src/ and from dist/ alike. */
export const DEFAULT_WORDPRESS_DIR = fileURLToPath(new URL('../../dist/wordpress/', import.meta.url));

const ZIP_NAME = /^mandate-wordpress-(\d+)\.(\d+)\.(\d+)\.zip$/;

export interface WordpressZip {
  /** mandate-wordpress-<version>.zip, the name a download is saved under. */
  filename: string;
  version: string;
  body: Buffer;
  /** RFC 9530 Content-Digest of the body: `sha-256=:<base64>:`. */
  contentDigest: string;
  etag: string;
}

/** The newest of the file names (by version, numerically), or undefined. */
export function newestZipName(names: string[]): string | undefined {
  const versions = names.flatMap((name) => {
    const m = ZIP_NAME.exec(name);
    return m ? [{ name, parts: [Number(m[1]), Number(m[2]), Number(m[3])] }] : [];
  });
  versions.sort((a, b) => b.parts[0]! - a.parts[0]! || b.parts[1]! - a.parts[1]! || b.parts[2]! - a.parts[2]!);
  return versions[0]?.name;
}

export class WordpressZips {
  private loaded: WordpressZip | undefined;

  constructor(private readonly dir: string = DEFAULT_WORDPRESS_DIR) {}

  /** The newest zip, or 404 saying how the operator builds it. Kept once read, as the SDK tarballs are. */
  async newest(): Promise<WordpressZip> {
    if (this.loaded) return this.loaded;
    const missing = notFound('the WordPress plugin was not built on this service: its operator runs `npm run build` (or `npm start`, which builds what is missing) to make it (in packages/server/dist/wordpress)');
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const filename = newestZipName(names);
    if (!filename) throw missing;
    const body = await readFile(join(this.dir, filename)).catch(() => {
      throw missing;
    });
    const sha256 = createHash('sha256').update(body).digest('base64');
    const version = ZIP_NAME.exec(filename)!.slice(1, 4).join('.');
    this.loaded = { filename, version, body, contentDigest: `sha-256=:${sha256}:`, etag: `"${sha256.slice(0, 43)}"` };
    return this.loaded;
  }
}
