import type { RelayTiming } from './relay-timing.js';

/** How one relay connection ended, as far as the wait before the next one is concerned. */
export type ConnectionEnd =
  | { kind: 'ended'; livedMs: number }
  | { kind: 'refused'; status: number; retryAfterMs: number | undefined }
  | { kind: 'failed' };

/**
 * The wait before reconnecting to the relay, as data: from `firstReconnectMs`, doubling up to
 * `maxReconnectMs`, times a random 1 to 2 (capped) so that many homes do not reconnect in step after
 * the relay restarts; the backoff starts over after a stream that lived `stableMs`. A refused token
 * waits `refusedRetryMs`; a Retry-After (429, 503) is honoured up to `maxRetryAfterMs`.
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
    if (end.kind === 'refused' && end.retryAfterMs !== undefined) {
      return Math.min(end.retryAfterMs, this.timing.maxRetryAfterMs);
    }
    const { firstReconnectMs, maxReconnectMs } = this.timing;
    const base = Math.min(firstReconnectMs * 2 ** this.failures, maxReconnectMs);
    this.failures += 1;
    return Math.min(maxReconnectMs, base * (1 + this.random()));
  }
}

/** 401 and 403: the relay refuses this token (or its absence), which waiting briefly will not change. */
export function isAccessRefusal(status: number): boolean {
  return status === 401 || status === 403;
}
