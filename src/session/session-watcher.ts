import { unwatchFile, watchFile, type Stats } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, type Logger } from '../log.js';
import { DATA_FILES } from './data-folder.js';
import type { PrivateFolder } from './private-folder.js';
import type { SessionStore, StoredSession } from './session-store.js';

/**
 * How often session.json is looked at: one stat a second costs nothing, and a sign-in on the settings
 * page is followed well within the 5 s a user waits for it.
 */
const POLL_INTERVAL_MS = 1_000;

/** Changes come in bursts (a temp file, then the rename): one read once the burst is over. */
const DEBOUNCE_MS = 300;

/**
 * Tells its listener what session.json holds after every change on disk, whoever made it: the
 * Homebridge UI's plugin server signing in or out, or this process. It polls the file's status with
 * Node's own watchFile rather than waiting for file system events: one file needs nothing more, and
 * polling also works where events never come (a Homebridge in Docker on a bind mount, a network share).
 */
export class SessionWatcher {
  private debounce: NodeJS.Timeout | undefined;
  private watching = false;
  private stopped = false;
  private readonly path: string;
  private readonly onStat = (current: Stats, previous: Stats): void => {
    // A write in place moves the modification time; a rename over it or a removal changes the inode.
    // Only the access or status-change time moving (a read, a chmod) changes nothing in the file.
    if (!this.stopped && (current.mtimeMs !== previous.mtimeMs || current.ino !== previous.ino)) {
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => void this.report(), DEBOUNCE_MS);
    }
  };

  constructor(
    private readonly folder: PrivateFolder,
    private readonly store: SessionStore,
    private readonly log: Logger,
    private readonly onChange: (session: StoredSession | undefined) => void,
  ) {
    this.path = join(folder.path, DATA_FILES.session);
  }

  /** Resolves once the file is watched. */
  async start(): Promise<void> {
    await this.folder.prepare();
    // Homebridge may shut down while the folder is being prepared: nothing is watched after stop().
    if (this.stopped) {
      return;
    }
    // Not persistent: the watch never keeps Homebridge's process alive on its way out.
    watchFile(this.path, { interval: POLL_INTERVAL_MS, persistent: false }, this.onStat);
    this.watching = true;
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.debounce);
    if (this.watching) {
      unwatchFile(this.path, this.onStat);
      this.watching = false;
    }
    return Promise.resolve();
  }

  private async report(): Promise<void> {
    try {
      this.onChange(await this.store.readSession());
    } catch (error) {
      this.log.warn(`Reading the changed session failed: ${errorMessage(error)}`);
    }
  }
}
