import { BackoffDelays, type Backoff } from '../values/backoff.js';

/**
 * When the background work runs next: a retry after a failure (from 1 minute, doubling, up to
 * 1 hour, with jitter), or the periodic refresh after a success (every 12 hours). It owns the one
 * timer, so at most one run is ever pending, and nothing is left behind once it is stopped.
 */

export interface ScheduleTiming {
  /** The waits between failed runs; the jitter keeps homes that failed in the same outage from retrying together. */
  retry: Backoff;
  refreshMs: number;
  /** 0 to 1, for the jitter (Math.random when absent): tests pick where in its range each wait falls. */
  random?: () => number;
}

export const SCHEDULE_TIMING: Readonly<ScheduleTiming> = Object.freeze({
  // Steps of 2, 4 ... 64 minutes capped at 60, of which the jitter waits the upper half: the first retry
  // comes after 1 to 2 minutes, the latest at most an hour apart.
  retry: Object.freeze({ firstMs: 2 * 60_000, factor: 2, maxMs: 60 * 60_000, jitter: true }),
  refreshMs: 12 * 60 * 60_000,
});

/** Why a run happens: the refresh repeats work that already succeeded. */
export type RunReason = 'start' | 'retry' | 'refresh';

export class Schedule {
  private timer: NodeJS.Timeout | undefined;
  private readonly retries: BackoffDelays;
  private stopped = false;

  constructor(
    private readonly timing: ScheduleTiming,
    private readonly run: (reason: RunReason) => void,
    /** Told when a retry or the refresh is due (ms since the epoch), and undefined when none is. */
    private readonly onPlanned: (dueAt: number | undefined) => void = () => undefined,
  ) {
    this.retries = new BackoffDelays(timing.retry, timing.random);
  }

  /** Runs at once (on the next turn of the event loop), replacing whatever was pending; the backoff starts over. */
  runNow(): void {
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

  /** Nothing runs until runNow: waiting for the user, who alone can fix what failed. */
  pause(): void {
    this.clear();
    this.onPlanned(undefined);
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
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
