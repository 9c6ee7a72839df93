import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { errorCode, type Logger } from '../log.js';
import { GROUP_AND_OTHER_BITS, type PrivateFolder } from './data-folder.js';
import { describeFileError, FileReadError } from './file-errors.js';

const PRIVATE_FILE_MODE = 0o600;

export type ShapeGuard<T> = (value: unknown) => value is T;

/** What was read last, and what it parsed to; no text when the file was missing. */
interface Snapshot<T> {
  text: string | undefined;
  value: T | undefined;
}

/**
 * One JSON file of a PrivateFolder, which another process may change at any time. Every read reads
 * the file's text, never only its status: a file replaced within one tick of a coarse clock, by a
 * file of the same size on an inode the removed one freed, has the very inode, size and modification
 * time of the one before it (seen on ext4 under load), and on a network share the server's clock
 * stamps the time. Taking such a file for unchanged would miss a sign-in on the settings page until
 * a restart; the files are a kilobyte or two, so reading one whole costs next to nothing. Only
 * parsing is saved: the same text keeps the value it parsed to. Every change is a read-modify-write
 * under the folder's lock of what the file holds at that moment, never of what an earlier read kept,
 * written atomically.
 *
 * Only a missing file is absent. A file that could not be read (too many open files, permission, an
 * I/O error) throws a FileReadError and is tried again at the next read: taken for absent, it would
 * have a session dropped or a secret made anew while the file is intact. A corrupt file is absent,
 * with a warning.
 */
export class JsonFile<T> {
  private snapshot?: Snapshot<T>;
  /** A mode that cannot be tightened (a read-only mount, another user's file) is said once. */
  private modeWarned = false;

  constructor(
    private readonly folder: PrivateFolder,
    readonly name: string,
    private readonly isShape: ShapeGuard<T>,
    private readonly log: Logger,
  ) {}

  get path(): string {
    return join(this.folder.path, this.name);
  }

  /** The content; undefined when the file is missing or broken. Throws a FileReadError when it cannot be read. */
  async read(): Promise<T | undefined> {
    await this.folder.check();
    return this.readAgain();
  }

  /**
   * Applies `change` to the file's current content and saves what it returns; undefined removes the
   * file. Returning the content it was given writes nothing.
   */
  update(change: (current: T | undefined) => T | undefined): Promise<T | undefined> {
    return this.folder.whileLocked(async () => {
      const current = await this.readAgain();
      const next = change(current);
      if (next !== current) {
        await (next === undefined ? rm(this.path, { force: true }) : writeJsonFileAtomic(this.path, next));
      }
      return next;
    });
  }

  /** Replaces the file under the lock, whatever it holds and whether or not it can be read. */
  replace(value: T): Promise<void> {
    return this.folder.whileLocked(() => writeJsonFileAtomic(this.path, value));
  }

  /** Removes the file under the lock, whatever it holds and whether or not it can be read. */
  remove(): Promise<void> {
    return this.folder.whileLocked(() => rm(this.path, { force: true }));
  }

  /** The content, created and saved first when there is none. Only creating takes the lock. */
  async readOrCreate(create: () => T): Promise<T> {
    return (await this.read()) ?? ((await this.update((current) => current ?? create())) as T);
  }

  /**
   * Reads the file. The same text keeps the same value, the very object: whoever compares what two
   * reads returned sees a change only when the content changed.
   */
  private async readAgain(): Promise<T | undefined> {
    const text = await this.load();
    const kept = this.snapshot;
    const value = kept !== undefined && kept.text === text ? kept.value : text === undefined ? undefined : this.parse(text);
    this.snapshot = { text, value };
    return value;
  }

  /**
   * The text, from one open file: a file replaced meanwhile is read whole, the old or the new. A file
   * whose mode lets others in is tightened to 0600, if it can be.
   */
  private async load(): Promise<string | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') {
        return undefined;
      }
      throw new FileReadError(this.path, error);
    }
    try {
      const { mode } = await handle.stat();
      const text = await handle.readFile('utf8');
      await this.tighten(handle, mode);
      return text;
    } catch (error) {
      throw new FileReadError(this.path, error);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /** The warnings never quote the content (it may hold secrets), which is why JSON.parse's message, which does quote it, is not passed on. */
  private parse(text: string): T | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.log.warn(`Ignoring ${this.path}: it is not valid JSON; it is treated as missing and rewritten when needed.`);
      return undefined;
    }
    if (!this.isShape(value)) {
      this.log.warn(`Ignoring ${this.path}: its content is not what this plugin wrote; it is treated as missing.`);
      return undefined;
    }
    return value;
  }

  /** Only a mode that is wrong is changed, so storage that cannot be changed is still read. */
  private async tighten(handle: FileHandle, mode: number): Promise<void> {
    if ((mode & GROUP_AND_OTHER_BITS) === 0) {
      return;
    }
    try {
      await handle.chmod(PRIVATE_FILE_MODE);
    } catch (error) {
      if (!this.modeWarned) {
        this.modeWarned = true;
        this.log.warn(`Could not make ${this.path} private to its owner (${describeFileError(error)}); it is read as it is.`);
      }
    }
  }
}

/**
 * Replaces a file's content so that readers, and the file after a crash or power loss, see either the
 * old or the new content in full: a private temp file in the same folder (rename is atomic only within
 * one file system), flushed to disk, then renamed over the target. On failure the target is untouched
 * and the temp file removed.
 */
async function writeJsonFileAtomic(path: string, value: unknown): Promise<void> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  const tempPath = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(tempPath, 'wx', PRIVATE_FILE_MODE);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tempPath, path);
  } catch (error) {
    await rm(tempPath, { force: true });
    throw error;
  }
}
