import type { DoorbellClient } from '../cloud/doorbell.js';
import type { DoorbellList } from '../cloud/doorbell.js';
import { CloudError } from '../cloud/errors.js';
import { errorMessage, type Logger } from '../log.js';
import type { RequestSlots } from './request-slots.js';

/**
 * The account's doorbell list, read between the passes: one GET for the whole account, never one per
 * doorbell. It is the cheapest call that tells whether the service still accepts the session, so an
 * expired session is noticed within minutes rather than at the next refresh, hours away. A failure
 * other than a refused session is only tried again at the next read: the list never faults a
 * doorbell by itself.
 */
export class DoorbellListRead {
  /** False once the service answered that it does not offer the list: it is not asked again this run. */
  private offered = true;
  /** The list as the last read found it; undefined before the first answer. */
  latest: DoorbellList | undefined;
  /** Some read of this run is over (answered, failed, or not offered). */
  settled = false;
  /** A read still under way when the next falls due is not doubled. */
  private reading = false;

  constructor(
    private readonly slots: RequestSlots,
    private readonly log: Logger,
    /** The service no longer accepts the session (or the configured token). */
    private readonly sessionRefused: () => void,
    /** The service does not offer the list: no read is due for the rest of the run. */
    private readonly notOffered: () => void,
    /** A read is over: the list it found, or undefined when it found none. */
    private readonly onRead: (list: DoorbellList | undefined) => void = () => undefined,
  ) {}

  /**
   * Reads the list once with the session in use, if there is one; what the answer means is told to the
   * callbacks. A read called off (`signal`) means nothing.
   */
  async read(client: DoorbellClient | undefined, signal: AbortSignal): Promise<void> {
    if (client === undefined || !this.offered || this.reading) {
      return;
    }
    this.reading = true;
    let found: DoorbellList | undefined;
    try {
      const answer = await this.slots.run(() => client.listDoorbells({ signal }), signal);
      if (answer.offered) {
        this.latest = { doorbells: answer.doorbells, skipped: answer.skipped };
        found = this.latest;
      } else {
        this.offered = false;
        this.log.info('The doorbell service does not offer the doorbell list: an expired session is noticed at the next refresh instead.');
        this.notOffered();
      }
    } catch (error) {
      if (signal.aborted) {
        return;
      }
      // Told before the session's loss, whose faults then come last.
      this.settled = true;
      this.onRead(undefined);
      if (error instanceof CloudError && error.sessionInvalid) {
        this.sessionRefused();
      } else {
        this.log.debug(`Could not read the doorbell list (${errorMessage(error)}): it is read again at its next turn.`);
      }
      return;
    } finally {
      this.reading = false;
    }
    this.settled = true;
    this.onRead(found);
  }
}
