import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../log.js';

const PRIVATE_FOLDER_MODE = 0o700;

/** The lock is a folder proper-lockfile creates inside the data folder; ours are never called this. */
const LOCK_NAME = '.lock';

/**
 * How long a holder may keep the lock before others consider it dead (a crashed process), and how
 * patiently they wait for it. Writes take milliseconds, so a few seconds of waiting is plenty.
 */
const LOCK_OPTIONS = {
  stale: 10_000,
  retries: { retries: 60, factor: 1.3, minTimeout: 10, maxTimeout: 250 },
  realpath: false,
} as const;

/**
 * A folder only this user may enter, shared by two processes (the plugin and the Homebridge UI's
 * plugin server). Changes to its files happen under one lock, held across processes.
 */
export class PrivateFolder {
  private prepared?: Promise<void>;
  /** Changes in this process wait their turn here, so they never contend for the lock with each other. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly log: Logger,
  ) {}

  /** Creates the folder, or tightens an existing one to 0700. A failure is retried on the next call. */
  prepare(): Promise<void> {
    this.prepared ??= createPrivateFolder(this.path).catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    });
    return this.prepared;
  }

  /** Runs `change` while holding the folder's lock, after every earlier change of this process. */
  whileLocked<R>(change: () => Promise<R>): Promise<R> {
    const result = this.queue.then(() => this.withLock(change));
    // A failed change is reported to its caller and must not block the changes queued after it.
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async withLock<R>(change: () => Promise<R>): Promise<R> {
    await this.prepare();
    const release = await lockfile.lock(this.path, {
      ...LOCK_OPTIONS,
      lockfilePath: join(this.path, LOCK_NAME),
      // The library's default throws from a timer, which would take Homebridge down with it.
      onCompromised: (error) => this.log.warn(`The lock on ${this.path} was lost while writing: ${error.message}`),
    });
    try {
      return await change();
    } finally {
      await release().catch(() => undefined);
    }
  }
}

async function createPrivateFolder(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  // mkdir leaves an existing folder as it is, however loose its mode.
  await chmod(path, PRIVATE_FOLDER_MODE);
}
