/**
 * How patiently something that failed is tried again, as data. Three waits follow this one rule, each
 * with its own numbers: a cloud call's retries within the call (cloud/http.ts: p-retry runs the
 * attempts, the wait between them is backoffDelay), the background retries of the connection
 * (connection/schedule.ts) and the relay's reconnects (push/relay/subscription.ts). Where a server says when
 * to ask again (Retry-After), those waits take the larger of its wait and the backoff's
 * (honouringRetryAfter).
 *
 * Two waits do not follow it, on purpose: the data folder's lock (proper-lockfile's own retries, 10 to
 * 250 ms apart, as a write holds the lock for milliseconds; storage/data-folder.ts) and the wait for
 * Homebridge to register the Matter devices (a poll, not a failure: its pauses start over after each
 * registration; matter/registration-wait.ts).
 *
 * The n-th failure in a row (counted from 0) has a step of `firstMs × factor^n`, at most `maxMs`.
 * With `jitter`, the wait is a random point in the upper half of its step ("equal jitter"): many homes
 * that failed together, in a cloud or relay outage, do not all come back at the same instant, while no
 * wait is shorter than half its step. The cap is jittered too, or the homes would fall back in step
 * there.
 */
export interface Backoff {
  /** The first step, in milliseconds. */
  firstMs: number;
  /** How much each step grows over the one before. */
  factor: number;
  /** The largest step, in milliseconds. */
  maxMs: number;
  /** Take a random part, up to half, off each step. */
  jitter: boolean;
}

/** The step after `failures` failures in a row before this one, in whole milliseconds. */
export function backoffStep(backoff: Readonly<Backoff>, failures: number): number {
  return Math.round(Math.min(backoff.firstMs * backoff.factor ** failures, backoff.maxMs));
}

/**
 * The wait after `failures` failures in a row before this one, in whole milliseconds (a timer counts
 * no finer, and what the log announces is then what is waited). `random` gives 0 to 1: half the step
 * at 0, the whole step at 1.
 */
export function backoffDelay(backoff: Readonly<Backoff>, failures: number, random: () => number = Math.random): number {
  const stepMs = backoffStep(backoff, failures);
  return backoff.jitter ? Math.round((stepMs / 2) * (1 + random())) : stepMs;
}

/** The failures in a row and the wait each asks for; it stops counting at the cap, where the step no longer grows. */
export class BackoffDelays {
  private failures = 0;

  constructor(
    private readonly backoff: Readonly<Backoff>,
    private readonly random: () => number = Math.random,
  ) {}

  /** Counts one more failure and returns the wait before the next attempt. */
  next(): number {
    const delayMs = backoffDelay(this.backoff, this.failures, this.random);
    if (backoffStep(this.backoff, this.failures) < this.backoff.maxMs) {
      this.failures += 1;
    }
    return delayMs;
  }

  /** Something succeeded: the next failure waits the first step again. */
  reset(): void {
    this.failures = 0;
  }
}

/**
 * The wait when the server said when to ask again (Retry-After): the larger of that and the backoff's
 * own wait, not both one after the other. A server that asks for 10 s is asked again after 10 s; one
 * that says 0 (or a date already past) while refusing still waits the backoff, so it is not asked
 * again at once, over and over.
 */
export function honouringRetryAfter(backoffMs: number, retryAfterMs: number | undefined): number {
  return retryAfterMs === undefined ? backoffMs : Math.max(backoffMs, retryAfterMs);
}
