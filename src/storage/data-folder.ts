import { constants } from 'node:fs';
import { access, chmod, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { errorCode, type Logger } from '../log.js';
import { describeFileError } from './file-errors.js';

/** The data folder: where it is, the files it holds, its modes and its lock. */

const PRIVATE_FOLDER_MODE = 0o700;
/** The mode bits that let anyone but the owner in: the data folder and its files have none. */
export const GROUP_AND_OTHER_BITS = 0o077;

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
  private checked?: Promise<void>;
  /** Changes in this process wait their turn here, so they never contend for the lock with each other. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly log: Logger,
  ) {}

  /**
   * Before the first read: an existing folder that others may enter is tightened to 0700, and a folder
   * that cannot be written is said once. Never fails: whatever is there is still read, so storage
   * that is read-only (a read-only mount, a backup restored by another user) keeps its session and
   * secrets, and only the writes fail.
   */
  check(): Promise<void> {
    // A folder that could not be looked at (a symbolic link loop, an I/O error) is looked at again
    // next time: remembered, its mode would never be tightened nor its storage said to be read-only.
    this.checked ??= checkFolder(this.path, this.log).then((lookedAt) => {
      if (!lookedAt) {
        this.checked = undefined;
      }
    });
    return this.checked;
  }

  /** Before a write: creates the folder (0700) when it is missing. A failure is retried on the next call. */
  private prepare(): Promise<void> {
    this.prepared ??= mkdir(this.path, { recursive: true, mode: PRIVATE_FOLDER_MODE })
      .then(() => this.check())
      .catch((error: unknown) => {
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
    const options = {
      ...LOCK_OPTIONS,
      lockfilePath: join(this.path, LOCK_NAME),
      // The library's default throws from a timer, which would take Homebridge down with it.
      onCompromised: (error: Error) => this.log.warn(`The lock on ${this.path} was lost while writing: ${error.message}`),
    };
    // The library retries whatever failed; only a lock held by another process is worth waiting for.
    // A folder that cannot be written (read-only, full) fails at once, not after seconds of retries.
    const release = await lockfile.lock(this.path, { ...options, retries: 0 }).catch((error: unknown) => {
      if (errorCode(error) !== 'ELOCKED') {
        throw error;
      }
      return lockfile.lock(this.path, options);
    });
    try {
      return await change();
    } finally {
      await release().catch(() => undefined);
    }
  }
}

/**
 * mkdir leaves an existing folder as it is, however loose its mode: that is looked at here, and changed
 * only when wrong. Resolves whether the folder could be looked at; a missing one counts as looked at.
 */
async function checkFolder(path: string, log: Logger): Promise<boolean> {
  let mode: number;
  try {
    ({ mode } = await stat(path));
  } catch (error) {
    // A missing folder is made, private, by the first write; any other failure shows in the reads.
    return errorCode(error) === 'ENOENT';
  }
  if ((mode & GROUP_AND_OTHER_BITS) !== 0) {
    await chmod(path, PRIVATE_FOLDER_MODE).catch((error: unknown) =>
      log.warn(`Could not make ${path} private to its owner (${describeFileError(error)}); its files are read as they are.`),
    );
  }
  await access(path, constants.W_OK).catch((error: unknown) =>
    log.warn(
      `${path} cannot be written (${describeFileError(error)}): the session and push secrets in it are used, ` +
        'but signing in or out and the status for the settings page cannot be saved until it can.',
    ),
  );
  return true;
}

/**
 * `<Homebridge storage path>/doorbell-motion/`: everything the plugin keeps between restarts, shared
 * with the Homebridge UI's plugin server. Nothing is written anywhere else.
 */
const DATA_FOLDER_NAME = 'doorbell-motion';

export const DATA_FILES = {
  /** The signed-in session (token, account, time of sign-in). */
  session: 'session.json',
  /** This installation's id and the one-time codes it must never send again. */
  installation: 'installation.json',
  /** The push receiver's secret and the relay topic. */
  push: 'push.json',
  /** Where the relay stream picks up after a restart: the last message handled, or the relay's time. */
  relay: 'relay.json',
  /** What the running plugin knows of its delivery, for the settings page; never a secret. */
  status: 'status.json',
} as const;

export function dataFolderPath(storagePath: string): string {
  return join(storagePath, DATA_FOLDER_NAME);
}

/** One per process: the stores of a process share it, so their writes queue up instead of contending. */
export function openDataFolder(storagePath: string, log: Logger): PrivateFolder {
  return new PrivateFolder(dataFolderPath(storagePath), log);
}

/** Where each account of a config with several keeps its own session and installation. */
const ACCOUNTS_FOLDER_NAME = 'accounts';
const ACCOUNT_KEY = /^[0-9a-f]{12}$/;

/** `<data folder>/accounts/<key>/`; the data folder itself without a key (the one account of a config without `accounts`). */
export function accountFolderPath(storagePath: string, key: string | undefined): string {
  // A key is 12 hex digits (accountKey, values/address.ts); anything else could name a folder elsewhere.
  if (key !== undefined && !ACCOUNT_KEY.test(key)) {
    throw new Error('An account key is 12 lower-case hex digits.');
  }
  return key === undefined ? dataFolderPath(storagePath) : join(dataFolderPath(storagePath), ACCOUNTS_FOLDER_NAME, key);
}

/**
 * An account's own folder, with the data folder's rules (0700, files 0600, its own lock), made on its
 * first write. Without a key it is the data folder: a config without `accounts` keeps its files where
 * they always were. One per account and process, as the data folder.
 */
export function openAccountFolder(storagePath: string, key: string | undefined, log: Logger): PrivateFolder {
  return new PrivateFolder(accountFolderPath(storagePath, key), log);
}
