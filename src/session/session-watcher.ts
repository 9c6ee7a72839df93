import type { FSWatcher } from 'chokidar';
import { basename } from 'node:path';
import { errorMessage, type Logger } from '../log.js';
import { DATA_FILES } from './data-folder.js';
import type { PrivateFolder } from './private-folder.js';
import type { SessionStore, StoredSession } from './session-store.js';

/** Changes come in bursts (a temp file, then the rename): one read once the burst is over. */
const DEBOUNCE_MS = 300;

/**
 * Tells its listener what session.json holds after every change on disk, whoever made it: the
 * Homebridge UI's plugin server signing in or out, or this process. Within a second of the change.
 */
export class SessionWatcher {
  private watcher: FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly folder: PrivateFolder,
    private readonly store: SessionStore,
    private readonly log: Logger,
    private readonly onChange: (session: StoredSession | undefined) => void,
  ) {}

  /** Resolves once the folder is watched. */
  async start(): Promise<void> {
    await this.folder.prepare();
    // Loaded here, not with the plugin: a set-up with a doorbell access token never follows session.json.
    const { watch } = await import('chokidar');
    // Homebridge may shut down while the folder is being prepared: a watcher made after stop() would
    // never be closed, and would keep the process alive.
    if (this.stopped) {
      return;
    }
    const watcher = watch(this.folder.path, { ignoreInitial: true, depth: 0 });
    this.watcher = watcher;
    watcher.on('all', (_event, path) => {
      if (!this.stopped && basename(path) === DATA_FILES.session) {
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void this.report(), DEBOUNCE_MS);
      }
    });
    // A watcher that failed must not take Homebridge down; the plugin then follows on the next restart.
    watcher.on('error', (error) => this.log.warn(`Watching ${this.folder.path} failed: ${errorMessage(error)}`));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.debounce);
    await this.watcher?.close();
  }

  private async report(): Promise<void> {
    try {
      this.onChange(await this.store.readSession());
    } catch (error) {
      this.log.warn(`Reading the changed session failed: ${errorMessage(error)}`);
    }
  }
}
