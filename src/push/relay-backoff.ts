import type { RelayTiming } from './relay-timing.js';

/** How one relay connection ended, as far as the wait before the next one is concerned. */
export type ConnectionEnd =
  | { kind: 'ended'; livedMs: number }
  | { kind: 'refused'; status: number; retryAfterMs: number | undefined }
  | { kind: 'failed' };

/**
 * The wait before reconnecting to the relay, as data: a step from `firstReconnectMs`, doubling up to
 * `maxReconnectMs`, of which a random half is taken off ("equal jitter") so that many homes do not
 * reconnect in step after the relay restarts, at the cap too; the backoff starts over after a stream
 * that lived `stableMs`. A refused token waits `refusedRetryMs`. A Retry-After (429, 503) is honoured
 * up to `maxRetryAfterMs`, but never shortens the backoff: a relay that says `Retry-After: 0` (or a
 * date in the past) while refusing must not be asked again at once, over and over.
 */
export class ReconnectDelays {
  private failures = 0;

  constructor(
    private readonly timing: RelayTiming,
    private readonly random: () => number = Math.random,
  ) {}

  after(end: ConnectionEnd): number {
    if (end.kind === 'refused' && isAccessRefusal(end.status)) {
      return this.timing.refusedRetryMs;
    }
    if (end.kind === 'ended' && end.livedMs >= this.timing.stableMs) {
      this.failures = 0;
    }
    const backoffMs = this.nextBackoff();
    if (end.kind === 'refused' && end.retryAfterMs !== undefined) {
      return Math.max(backoffMs, Math.min(end.retryAfterMs, this.timing.maxRetryAfterMs));
    }
    return backoffMs;
  }

  /** Counts one more failure in a row; the delay stays within the step, so the cap itself is jittered. */
  private nextBackoff(): number {
    const { firstReconnectMs, maxReconnectMs } = this.timing;
    const stepMs = Math.min(firstReconnectMs * 2 ** this.failures, maxReconnectMs);
    this.failures += 1;
    return (stepMs / 2) * (1 + this.random());
  }
}

/** 401 and 403: the relay refuses this token (or its absence), which waiting briefly will not change. */
export function isAccessRefusal(status: number): boolean {
  return status === 401 || status === 403;
}
