import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { KeyFileError } from '../client/errors.ts';
import { ensurePrivateDir, readPrivateFile, writePrivateFileAtomic } from '../keys/secure-fs.ts';
import { normalizeSiteId } from '../site-id.ts';
import { withFileLock, type FileLockOptions } from './file-lock.ts';
import { KeyedMutex } from './mutex.ts';
import { isSiteState, type SiteState, type StateStore } from './state-store.ts';

/**
 * State in `<dir>/state/<site>.json`, one file per site (0600, atomic writes) so that processes
 * working on different sites never overwrite each other's refresh tokens; `<site>.lock` serialises
 * processes working on the same site.
 */
export class FileStateStore implements StateStore {
  private readonly dir: string;
  private readonly mutex = new KeyedMutex();

  constructor(agentDir: string, private readonly lockOptions: FileLockOptions = {}) {
    this.dir = join(agentDir, 'state');
  }

  private file(site: string, ext: 'json' | 'lock'): string {
    // normalizeSiteId allows only [a-z0-9.-:] with no empty label, so no path can escape `dir`.
    return join(this.dir, `${normalizeSiteId(site)}.${ext}`);
  }

  async read(site: string): Promise<SiteState | undefined> {
    const file = this.file(site, 'json');
    const text = readPrivateFile(file);
    if (text === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new KeyFileError(`${file} is not valid JSON`, `delete ${file}; the agent will need to ask for access to the site again`);
    }
    const state = (parsed as { state?: unknown } | null)?.state;
    if (!isSiteState(state)) throw new KeyFileError(`${file} is not a state file of this SDK`, `delete ${file}; the agent will need to ask for access to the site again`);
    return state;
  }

  async write(state: SiteState): Promise<void> {
    writePrivateFileAtomic(this.file(state.site, 'json'), `${JSON.stringify({ version: 1, state }, null, 2)}\n`);
  }

  async remove(site: string): Promise<void> {
    rmSync(this.file(site, 'json'), { force: true });
  }

  withLock<T>(site: string, fn: () => Promise<T>): Promise<T> {
    const lock = this.file(site, 'lock');
    return this.mutex.run(site, () => {
      ensurePrivateDir(this.dir);
      return withFileLock(lock, fn, this.lockOptions);
    });
  }
}
