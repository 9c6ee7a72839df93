import { BackoffDelays, honouringRetryAfter } from '../values/backoff.js';
import type { RelayTiming } from './relay-timing.js';

/** How one relay connection ended, as far as the wait before the next one is concerned. */
export type ConnectionEnd =
  | { kind: 'ended'; livedMs: number }
  | { kind: 'refused'; status: number; retryAfterMs: number | undefined }
  | { kind: 'failed' };

/**
 * The wait before reconnecting to the relay: the `reconnect` backoff, started over after a stream that
 * lived `stableMs`. A refused token waits `refusedRetryMs`. A Retry-After (429, 503) is honoured as
 * every retry honours it (the larger of it and the backoff), cut to `maxRetryAfterMs`.
 */
export class ReconnectDelays {
  private readonly backoff: BackoffDelays;

  constructor(
    private readonly timing: RelayTiming,
    random: () => number = Math.random,
  ) {
    this.backoff = new BackoffDelays(timing.reconnect, random);
  }

  after(end: ConnectionEnd): number {
    if (end.kind === 'refused' && isAccessRefusal(end.status)) {
      return this.timing.refusedRetryMs;
    }
    if (end.kind === 'ended' && end.livedMs >= this.timing.stableMs) {
      this.backoff.reset();
    }
    const backoffMs = this.backoff.next();
    if (end.kind === 'refused' && end.retryAfterMs !== undefined) {
      return honouringRetryAfter(backoffMs, Math.min(end.retryAfterMs, this.timing.maxRetryAfterMs));
    }
    return backoffMs;
  }
}

/** 401 and 403: the relay refuses this token (or its absence), which waiting briefly will not change. */
export function isAccessRefusal(status: number): boolean {
  return status === 401 || status === 403;
}
