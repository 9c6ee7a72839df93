import { BackoffDelays, type Backoff } from '../values/backoff.js';

/**
 * When the background work runs next: a retry after a failure (from 1 minute, doubling, up to
 * 1 hour, with jitter), or the periodic refresh after a success (every 12 hours). It owns the one
 * timer of the runs, so at most one run is ever pending, and the timer of the doorbell list reads
 * (every 15 minutes between the runs); nothing is left behind once it is stopped.
 */

export interface ScheduleTiming {
  /** The waits between failed runs; the jitter keeps homes that failed in the same outage from retrying together. */
  retry: Backoff;
  refreshMs: number;
  /** How often the doorbell list is read, start to start: how soon an expired session is noticed between refreshes. */
  listReadMs: number;
  /** 0 to 1, for the jitter (Math.random when absent): tests pick where in its range each wait falls. */
  random?: () => number;
}

export const SCHEDULE_TIMING: Readonly<ScheduleTiming> = Object.freeze({
  // Steps of 2, 4 ... 64 minutes capped at 60, of which the jitter waits the upper half: the first retry
  // comes after 1 to 2 minutes, the latest at most an hour apart.
  retry: Object.freeze({ firstMs: 2 * 60_000, factor: 2, maxMs: 60 * 60_000, jitter: true }),
  refreshMs: 12 * 60 * 60_000,
  listReadMs: 15 * 60_000,
});

/** Why a run happens: the refresh repeats work that already succeeded. */
export type RunReason = 'start' | 'retry' | 'refresh';

export class Schedule {
  private timer: NodeJS.Timeout | undefined;
  private listTimer: NodeJS.Timeout | undefined;
  private readonly retries: BackoffDelays;
  private stopped = false;
  /** Waiting for the user: no list read either, until the next runNow. */
  private paused = false;
  /** The service does not offer the list: no read for the rest of the run. */
  private listReadsEnded = false;

  constructor(
    private readonly timing: ScheduleTiming,
    private readonly run: (reason: RunReason) => void,
    /** Told when a retry or the refresh is due (ms since the epoch), and undefined when none is. */
    private readonly onPlanned: (dueAt: number | undefined) => void = () => undefined,
    /** Reads the doorbell list; the schedule only says when. */
    private readonly readList: () => void = () => undefined,
  ) {
    this.retries = new BackoffDelays(timing.retry, timing.random);
  }

  /** Runs at once (on the next turn of the event loop), replacing whatever was pending; the backoff starts over. */
  runNow(): void {
    this.paused = false;
    this.retries.reset();
    this.at(0, 'start');
  }

  /** Schedules a retry after the next backoff delay, and returns that delay: the one the timer waits. */
  retryLater(): number {
    const delayMs = this.retries.next();
    this.at(delayMs, 'retry');
    return delayMs;
  }

  /** Everything succeeded: the backoff starts over, and the refresh is due after its period. */
  refreshLater(): void {
    this.retries.reset();
    this.at(this.timing.refreshMs, 'refresh');
  }

  /**
   * Reads the doorbell list at once (on the next turn of the event loop, so the run that asks is not
   * held up by it), then every listReadMs after each read began, until paused or stopped.
   */
  readListNow(): void {
    if (this.stopped || this.paused || this.listReadsEnded) {
      return;
    }
    this.clearListTimer();
    this.listReadAfter(0);
  }

  /** No list read for the rest of the run. */
  endListReads(): void {
    this.listReadsEnded = true;
    this.clearListTimer();
  }

  /** Nothing runs, and the list is not read, until runNow: waiting for the user, who alone can fix what failed. */
  pause(): void {
    this.paused = true;
    this.clear();
    this.clearListTimer();
    this.onPlanned(undefined);
  }

  stop(): void {
    this.stopped = true;
    this.clear();
    this.clearListTimer();
  }

  private clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private clearListTimer(): void {
    clearTimeout(this.listTimer);
    this.listTimer = undefined;
  }

  private listReadAfter(delayMs: number): void {
    this.listTimer = setTimeout(() => {
      // Start to start: the next read is due a period after this one began, however long this one takes.
      this.listReadAfter(this.timing.listReadMs);
      this.readList();
    }, delayMs);
  }

  private at(delayMs: number, reason: RunReason): void {
    this.clear();
    if (this.stopped) {
      return;
    }
    // A start runs at once: what is due next is known once it is over.
    this.onPlanned(reason === 'start' ? undefined : Date.now() + delayMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run(reason);
    }, delayMs);
  }
}
