import type { Backoff } from '../values/backoff.js';

/** The relay subscription's clock: how long silence, a break or a refusal lasts before what. */
export interface RelayTiming {
  /** A stream that delivers nothing at all (not even a keepalive) for this long is dropped and reopened. */
  aliveMs: number;
  /** The waits between reconnects; the jitter keeps homes from reconnecting together after the relay restarts. */
  reconnect: Backoff;
  /** A stream that lived this long starts the backoff over. */
  stableMs: number;
  /** After the relay refused access (401, 403): the token will not fix itself soon. */
  refusedRetryMs: number;
  /** The longest Retry-After (on 429, 503) waited out; a longer one is cut to this. */
  maxRetryAfterMs: number;
  /** Down for longer than this, the doorbells show a fault. */
  faultAfterMs: number;
  /** A message older than this is a stale alert, dropped. */
  staleMs: number;
}

export const RELAY_TIMING: Readonly<RelayTiming> = Object.freeze({
  aliveMs: 100_000,
  // Steps of 2, 4 ... 32 s, then 60, of which the jitter waits the upper half: the first reconnect
  // comes after 1 to 2 s, the latest 30 to 60 s apart.
  reconnect: Object.freeze({ firstMs: 2_000, factor: 2, maxMs: 60_000, jitter: true }),
  stableMs: 60_000,
  refusedRetryMs: 10 * 60_000,
  maxRetryAfterMs: 10 * 60_000,
  faultAfterMs: 60_000,
  staleMs: 120_000,
});
