// The SDK tarballs served at /download/agent and /download/site (decisions §26). They are made by
// `npm run build` (scripts/build-downloads.mjs), never here: a request only reads what the build left
// in dist/tarballs, once, and keeps it in memory with its digest (a few hundred kB in all).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { notFound } from '../domain/errors.ts';

/** What the service offers, by the last segment of its address. */
export const SDK_DOWNLOADS = ['agent', 'site'] as const;
export type SdkDownload = (typeof SDK_DOWNLOADS)[number];

/**
 * Where the build writes them: packages/server/dist/tarballs. The same path from src/ (tests run the
 * sources) and from dist/ (the built service), both two folders below packages/server.
 */
export const DEFAULT_TARBALLS_DIR = fileURLToPath(new URL('../../dist/tarballs/', import.meta.url));

export interface SdkTarball {
  /** The file name a download is saved under, as npm names it: mandate-agent-0.1.0.tgz. */
  filename: string;
  /** The npm package inside, and its version. */
  name: string;
  version: string;
  body: Buffer;
  /** RFC 9530 Content-Digest of the body: `sha-256=:<base64>:`. */
  contentDigest: string;
  /** A strong ETag from the same hash. */
  etag: string;
}

/** The build's list of what it packed (dist/tarballs/index.json). */
type Index = Partial<Record<SdkDownload, { file?: unknown; name?: unknown; version?: unknown }>>;

export class SdkTarballs {
  private readonly loaded = new Map<SdkDownload, SdkTarball>();

  constructor(private readonly dir: string = DEFAULT_TARBALLS_DIR) {}

  /**
   * The tarball, or 404 (as /download/android without its file) saying how the operator builds it.
   * Kept once read: a running service serves the packages built with it; a rebuild is served from
   * the next start, with the code it goes with.
   */
  async get(which: SdkDownload): Promise<SdkTarball> {
    const known = this.loaded.get(which);
    if (known) return known;
    const tarball = await this.read(which);
    this.loaded.set(which, tarball);
    return tarball;
  }

  private async read(which: SdkDownload): Promise<SdkTarball> {
    const missing = notFound(`the ${which} package was not built on this service: its operator runs \`npm run build\` (or \`npm start\`, which builds what is missing) to make it (in packages/server/dist/tarballs)`);
    let entry: Index[SdkDownload];
    try {
      entry = (JSON.parse(await readFile(join(this.dir, 'index.json'), 'utf8')) as Index)[which];
    } catch {
      throw missing;
    }
    const { file, name, version } = entry ?? {};
    // Only a plain file name from the index: it never names a path outside the folder.
    if (typeof file !== 'string' || !/^[\w.-]+\.tgz$/.test(file) || typeof name !== 'string' || typeof version !== 'string') throw missing;
    const body = await readFile(join(this.dir, file)).catch(() => {
      throw missing;
    });
    const sha256 = createHash('sha256').update(body).digest('base64');
    return { filename: file, name, version, body, contentDigest: `sha-256=:${sha256}:`, etag: `"${sha256.slice(0, 43)}"` };
  }
}
