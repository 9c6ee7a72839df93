import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from './log.js';

const PRIVATE_FOLDER_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
const GROUP_AND_OTHER_BITS = 0o077;

export type ShapeGuard<T> = (value: unknown) => value is T;

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A folder only this user may enter, holding JSON files only this user may read. */
export class PrivateFolder {
  private prepared?: Promise<void>;

  constructor(readonly path: string) {}

  /** Creates the folder, or tightens an existing one to 0700. A failure is retried on the next call. */
  prepare(): Promise<void> {
    this.prepared ??= createPrivateFolder(this.path).catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    });
    return this.prepared;
  }

  file<T>(name: string, isShape: ShapeGuard<T>, log: Logger): JsonFile<T> {
    return new JsonFile(this, join(this.path, name), isShape, log);
  }
}

async function createPrivateFolder(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  // mkdir leaves an existing folder as it is, however loose its mode.
  await chmod(path, PRIVATE_FOLDER_MODE);
}

/**
 * One JSON file owned by this process: read from disk once, then kept in memory. Changes are applied
 * one after another, so overlapping callers never lose each other's writes or create a value twice.
 */
export class JsonFile<T> {
  private content?: Promise<T | undefined>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly folder: PrivateFolder,
    private readonly path: string,
    private readonly isShape: ShapeGuard<T>,
    private readonly log: Logger,
  ) {}

  /** The content; undefined when the file is missing, unreadable or broken. */
  async read(): Promise<T | undefined> {
    await this.folder.prepare();
    this.content ??= readJsonFile(this.path, this.isShape, this.log);
    return this.content;
  }

  write(value: T): Promise<void> {
    return this.serialised(() => this.save(value));
  }

  /** Applies `change` to the current content; does nothing when there is none. */
  update(change: (current: T) => T): Promise<T | undefined> {
    return this.serialised(async () => {
      const current = await this.read();
      if (current === undefined) {
        return undefined;
      }
      const next = change(current);
      if (next !== current) {
        await this.save(next);
      }
      return next;
    });
  }

  /** The content, created and saved first when there is none. */
  readOrCreate(create: () => T): Promise<T> {
    return this.serialised(async () => {
      const current = await this.read();
      if (current !== undefined) {
        return current;
      }
      const created = create();
      await this.save(created);
      return created;
    });
  }

  private serialised<R>(task: () => Promise<R>): Promise<R> {
    const result = this.queue.then(task);
    // A failed change is reported to its caller and must not block the changes queued after it.
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async save(value: T): Promise<void> {
    await this.folder.prepare();
    await writeJsonFileAtomic(this.path, value);
    this.content = Promise.resolve(value);
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
  return isJsonObject(error) && typeof error.code === 'string' ? error.code : 'unknown error';
}
