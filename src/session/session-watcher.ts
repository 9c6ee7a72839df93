import { errorMessage, type Logger } from '../log.js';
import type { SessionStore, StoredSession } from './session-store.js';

/**
 * How often session.json is looked at: reading a small file once a second costs nothing, and a
 * sign-in on the settings page is followed well within the 5 s a user waits for it.
 */
export const POLL_INTERVAL_MS = 1_000;

/**
 * Tells its listener what session.json holds after every change on disk, whoever made it: the
 * Homebridge UI's plugin server signing in or out, or this process. It reads the file at each poll
 * rather than waiting for file system events: one file needs nothing more, and polling also works
 * where events never come (a Homebridge in Docker on a bind mount, a network share). The store
 * replaces the file by a rename, so a poll never sees half a write.
 *
 * A missing file is reported at every poll, not only when it went missing: a session written and
 * removed between two polls (this process signs in with a code, the settings page signs out a moment
 * later) leaves the file as it was, yet the listener may be holding that session. The listener
 * ignores a report that changes nothing for it.
 */
export class SessionWatcher {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private polling = false;
  /** The last read failed: said once, until a read works again. */
  private failing = false;
  /** What the file held at the last look: the store hands back the same object while it is unchanged. */
  private last: StoredSession | undefined;

  constructor(
    private readonly store: SessionStore,
    private readonly log: Logger,
    private readonly onChange: (session: StoredSession | undefined) => void,
  ) {}

  /**
   * Resolves once the file is watched: what it holds now is the starting point, not a change. A file
   * that cannot be read yet is watched all the same; its first successful read tells what it holds.
   */
  async start(): Promise<void> {
    const session = await this.store.readSession().catch((error: unknown) => {
      this.log.warn(`${errorMessage(error)} Sign-ins on the settings page are followed once it can be.`);
      this.failing = true;
      return undefined;
    });
    // Homebridge may shut down while the folder is being prepared: nothing is watched after stop().
    if (this.stopped) {
      return;
    }
    this.last = session;
    // Unreferenced: the poll never keeps Homebridge's process alive on its way out.
    this.timer = setInterval(() => void this.poll(), POLL_INTERVAL_MS).unref();
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    return Promise.resolve();
  }

  private async poll(): Promise<void> {
    // A slow disk must not stack polls up.
    if (this.polling) {
      return;
    }
    this.polling = true;
    try {
      // The same object while the file's text is unchanged: the store parses it again only when it changed.
      const session = await this.store.readSession();
      if ((session !== this.last || session === undefined) && !this.stopped) {
        this.last = session;
        this.onChange(session);
      }
      this.failing = false;
    } catch (error) {
      // No news: a file that could not be read (too many open files, say) may well hold the session in
      // use, so nothing is reported until a read says what it holds. Said once, not every second.
      if (!this.failing) {
        this.log.warn(`${errorMessage(error)} Until then, the session in use is kept.`);
      }
      this.failing = true;
    } finally {
      this.polling = false;
    }
  }
}
