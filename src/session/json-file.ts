import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../log.js';
import type { PrivateFolder } from './private-folder.js';

const PRIVATE_FILE_MODE = 0o600;
const GROUP_AND_OTHER_BITS = 0o077;

export type ShapeGuard<T> = (value: unknown) => value is T;

/** What was read, and which version of the file it came from. */
interface Snapshot<T> {
  version: string;
  value: T | undefined;
}

/**
 * One JSON file of a PrivateFolder, which another process may change at any time. A read costs one
 * stat while the file is unchanged, and reads it again as soon as it changed. Every change is a
 * read-modify-write of the file's current content under the folder's lock, written atomically.
 */
export class JsonFile<T> {
  private snapshot?: Snapshot<T>;

  constructor(
    private readonly folder: PrivateFolder,
    readonly name: string,
    private readonly isShape: ShapeGuard<T>,
    private readonly log: Logger,
  ) {}

  get path(): string {
    return join(this.folder.path, this.name);
  }

  /** The content; undefined when the file is missing, unreadable or broken. */
  async read(): Promise<T | undefined> {
    await this.folder.prepare();
    const version = await fileVersion(this.path);
    if (this.snapshot?.version !== version) {
      // Read after the stat: should the file change in between, the next read sees a newer version again.
      this.snapshot = { version, value: await readJsonFile(this.path, this.isShape, this.log) };
    }
    return this.snapshot.value;
  }

  /**
   * Applies `change` to the current content and saves what it returns; undefined removes the file.
   * Returning the content it was given writes nothing.
   */
  update(change: (current: T | undefined) => T | undefined): Promise<T | undefined> {
    return this.folder.whileLocked(async () => {
      const current = await this.read();
      const next = change(current);
      if (next !== current) {
        await (next === undefined ? rm(this.path, { force: true }) : writeJsonFileAtomic(this.path, next));
      }
      return next;
    });
  }

  /** The content, created and saved first when there is none. Only creating takes the lock. */
  async readOrCreate(create: () => T): Promise<T> {
    return (await this.read()) ?? ((await this.update((current) => current ?? create())) as T);
  }
}

/**
 * Changes with every write: an atomic write replaces the file, so the inode changes too, and an edit
 * in place changes the modification time. Not the ctime: tightening the mode changes that.
 */
async function fileVersion(path: string): Promise<string> {
  try {
    const { ino, size, mtimeMs } = await stat(path);
    return `${ino}:${size}:${mtimeMs}`;
  } catch (error) {
    return `unreadable:${errorCode(error)}`;
  }
}

/**
 * Reads and checks a JSON file; never throws. A missing file is silently absent; any other problem is
 * absent with one warning naming the file. The warning never quotes the content (it may hold secrets),
 * which is why JSON.parse's message, which does quote it, is not passed on.
 */
async function readJsonFile<T>(path: string, isShape: ShapeGuard<T>, log: Logger): Promise<T | undefined> {
  let text: string;
  try {
    text = await readPrivateFile(path);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOENT') {
      log.warn(`Ignoring ${path}: it could not be read (${code}); it is treated as missing.`);
    }
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    log.warn(`Ignoring ${path}: it is not valid JSON; it is treated as missing and rewritten when needed.`);
    return undefined;
  }
  if (!isShape(value)) {
    log.warn(`Ignoring ${path}: its content is not what this plugin wrote; it is treated as missing.`);
    return undefined;
  }
  return value;
}

/** Reads a file and tightens its mode to 0600 if a group or others may access it. */
async function readPrivateFile(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const text = await handle.readFile('utf8');
    const { mode } = await handle.stat();
    if ((mode & GROUP_AND_OTHER_BITS) !== 0) {
      await handle.chmod(PRIVATE_FILE_MODE);
    }
    return text;
  } finally {
    await handle.close();
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

function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}
