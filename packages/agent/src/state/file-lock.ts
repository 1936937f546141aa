import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { StateLockedError } from '../client/errors.ts';
import { systemClock } from '../clock.ts';

export type FileLockOptions = {
  /** Give up after this long (default 60 s: a refresh may wait out a 429). */
  timeoutMs?: number;
  /** A lock older than this is taken over even if its process seems alive (default 5 min). */
  staleMs?: number;
};

/**
 * Runs `fn` while holding `lockFile`, a file created exclusively (O_EXCL), so that two processes
 * of the same agent never refresh the same site at once: the loser of such a race would present
 * a used refresh token and lose the access. A lock left by a process that died is taken over.
 */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, opts: FileLockOptions = {}): Promise<T> {
  const token = `${process.pid} ${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const staleMs = opts.staleMs ?? 300_000;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    if (tryCreate(lockFile, token)) break;
    if (isStale(lockFile, staleMs)) {
      removeStaleLock(lockFile);
      continue;
    }
    if (Date.now() > deadline) throw new StateLockedError(`another process holds ${lockFile}`);
    await systemClock.sleep(delay);
  }
  try {
    return await fn();
  } finally {
    release(lockFile, token);
  }
}

function tryCreate(lockFile: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockFile, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, token);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Stale: its process is gone (same machine), or it is older than `staleMs`. */
function isStale(lockFile: string, staleMs: number): boolean {
  let content: string;
  let mtimeMs: number;
  try {
    content = readFileSync(lockFile, 'utf8');
    mtimeMs = statSync(lockFile).mtimeMs;
  } catch {
    return false; // just released: try again
  }
  if (Date.now() - mtimeMs > staleMs) return true;
  const pid = Number(content.split(' ')[0]);
  // An empty file is one being written right now; give it time.
  if (!Number.isInteger(pid) || pid <= 0) return Date.now() - mtimeMs > 5_000;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function removeStaleLock(lockFile: string): void {
  try {
    unlinkSync(lockFile);
  } catch {
    // someone else cleaned it up first
  }
}

function release(lockFile: string, token: string): void {
  try {
    if (readFileSync(lockFile, 'utf8') === token) unlinkSync(lockFile);
  } catch {
    // already gone (taken over as stale): nothing to release
  }
}
