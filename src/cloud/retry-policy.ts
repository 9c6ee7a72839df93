import { setTimeout as delay } from 'node:timers/promises';
import type { Backoff } from '../values/backoff.js';

/**
 * The one place that says which failures are worth asking again, and how patiently. The HTTP layer
 * (CloudHttp), the error class (CloudError.retryable) and the push relay's reconnects all read it.
 */

/** Waits `ms`, rejecting as soon as `signal` aborts. */
export type Wait = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** The waits between the attempts. */
  backoff: Backoff;
  /**
   * A longer Retry-After is not waited out inside one call: the error surfaces with retryAfterMs and
   * the caller's background schedule tries again.
   */
  maxRetryAfterMs: number;
  /** Waits between two attempts, the backoff or a longer Retry-After; tests inject one that records the wait and returns at once. */
  wait: Wait;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  retries: 4,
  // Waits of 1 to 2 s, then 2 to 4, 4 to 8 and 8 to 16 s: the upper half of each step.
  backoff: Object.freeze({ firstMs: 2000, factor: 2, maxMs: 30_000, jitter: true }),
  maxRetryAfterMs: 60_000,
  wait: (ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }),
});

/** Failures that never reached an answer: asking again may well work. */
const RETRYABLE_TRANSPORT_FAILURES: ReadonlySet<string> = new Set(['network', 'timeout']);

/** A busy or failing server: 429 and every 5xx. Other statuses are answers that asking again will not change. */
const RETRYABLE_STATUSES = { listed: new Set([429]), ranges: [[500, 599]] } as const;

/** Statuses whose Retry-After header is honoured. */
const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.listed.has(status) || RETRYABLE_STATUSES.ranges.some(([from, to]) => status >= from && status <= to);
}

export function honoursRetryAfter(status: number): boolean {
  return RETRY_AFTER_STATUSES.has(status);
}

/** `failure` is a transport failure kind (network, timeout) or an HTTP status. */
export function isRetryable(failure: string | number): boolean {
  return typeof failure === 'number' ? isRetryableStatus(failure) : RETRYABLE_TRANSPORT_FAILURES.has(failure);
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (text === undefined || text === '') {
    return undefined;
  }
  if (/^\d+$/.test(text)) {
    return Number(text) * 1000;
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
