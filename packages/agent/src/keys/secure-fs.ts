import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { KeyFileError } from '../client/errors.ts';

/**
 * Files that hold secrets (the private key, refresh tokens): a directory only the user can enter
 * (0700), files only the user can read (0600), written atomically so a crash never leaves half a
 * key, and refused on reading when others could read them, as ssh refuses a world-readable key.
 */

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and parents) with mode 0700 when missing. An existing directory is used only if it is
 * ours and nobody else can write to it (as ssh refuses a group-writable ~/.ssh): whoever can write there
 * can replace the key or the refresh tokens by renaming files over them.
 */
export function ensurePrivateDir(dir: string): void {
  if (existsSync(dir)) {
    checkPrivateDir(dir);
    return;
  }
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdir's mode passes through the umask; set it exactly.
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Refuses a directory that is not a directory, belongs to another user, or that group or others may write to. */
export function checkPrivateDir(dir: string): void {
  // Followed if a symbolic link: what matters is the directory the files land in.
  const st = statSync(dir);
  if (!st.isDirectory()) throw new KeyFileError(`${dir} is not a directory`, 'point --dir (or MANDATE_AGENT_DIR) at a directory of your own');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new KeyFileError(`${dir} belongs to another user (uid ${st.uid}); the agent's key and tokens must be in a directory of your own`, 'point --dir (or MANDATE_AGENT_DIR) at a directory of your own');
  }
  const mode = st.mode & 0o777;
  if ((mode & 0o022) !== 0) {
    throw new KeyFileError(
      `permissions ${mode.toString(8).padStart(4, '0')} for ${dir} are too open: others could replace the key or the tokens in it`,
      `chmod 700 ${dir}`,
    );
  }
}

/**
 * Writes `data` to `file` atomically with mode 0600: a temporary file in the same directory is
 * created with that mode (never briefly readable by others), flushed to disk, then renamed over
 * the target. `exclusive` refuses to replace an existing file: the temporary file is then hard-linked
 * into place, which fails atomically if the target exists (two `init` runs racing cannot both win).
 */
export function writePrivateFileAtomic(file: string, data: string, opts: { exclusive?: boolean } = {}): void {
  const dir = dirname(file);
  ensurePrivateDir(dir);
  if (opts.exclusive && existsSync(file)) throw new KeyFileError(`${file} already exists; not overwriting it`);
  const tmp = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    if (opts.exclusive) {
      linkSync(tmp, file);
      unlinkSync(tmp);
    } else {
      renameSync(tmp, file);
    }
  } catch (e) {
    unlinkSync(tmp);
    if (opts.exclusive && (e as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyFileError(`${file} already exists; not overwriting it`);
    throw e;
  }
  syncDir(dir);
}

/** Makes the rename durable: a rotated refresh token lost in a crash would cost a new approval. */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some file systems cannot fsync a directory; the data itself is already on disk.
  }
}

/**
 * Reads a secret file, refusing it when its mode lets group or others read or write it. Returns
 * undefined when the file does not exist.
 */
export function readPrivateFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    // Check the opened file itself, not the path, so a swap between check and read cannot fool us.
    const mode = fstatSync(fd).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new KeyFileError(
        `permissions ${mode.toString(8).padStart(4, '0')} for ${file} are too open: it holds a secret and must not be accessible by others`,
        `chmod 600 ${file}`,
      );
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
