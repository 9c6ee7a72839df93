import { describe, expect, it } from '@jest/globals';
import { ReconnectDelays } from '../../src/push/relay-backoff.js';
import { RELAY_TIMING } from '../../src/push/relay-timing.js';

const FAILED = { kind: 'failed' } as const;
/** The largest value Math.random can return. */
const ALMOST_ONE = 1 - Number.EPSILON;

const seconds = (ms: number) => Math.round(ms) / 1000;

describe('ReconnectDelays with the production timing', () => {
  it('backs off from 2 s, doubling to 60 s, when the jitter takes nothing off', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    expect(Array.from({ length: 8 }, () => seconds(delays.after(FAILED)))).toEqual([2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it('takes a random 0 to 50 % off each step, so the first wait is 1 to 2 s and none passes its step', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0);
    expect(Array.from({ length: 8 }, () => seconds(delays.after(FAILED)))).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
  });

  it('keeps jittering once the backoff is at 60 s, so homes stay out of step', () => {
    let random = 0;
    const delays = new ReconnectDelays(RELAY_TIMING, () => random);
    Array.from({ length: 10 }, () => delays.after(FAILED));
    const atCap = [0, 0.5, ALMOST_ONE].map((value) => {
      random = value;
      return seconds(delays.after(FAILED));
    });
    expect(atCap).toEqual([30, 45, 60]);
  });

  it('starts over after a stream that lived 60 s, not after a shorter one', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    delays.after(FAILED);
    delays.after(FAILED);
    expect(seconds(delays.after({ kind: 'ended', livedMs: 59_999 }))).toBe(8);
    expect(seconds(delays.after({ kind: 'ended', livedMs: 60_000 }))).toBe(2);
  });

  it('honours Retry-After on 429 and 503, up to 10 minutes', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    expect(delays.after({ kind: 'refused', status: 429, retryAfterMs: 30_000 })).toBe(30_000);
    expect(delays.after({ kind: 'refused', status: 503, retryAfterMs: 86_400_000 })).toBe(600_000);
    expect(seconds(delays.after({ kind: 'refused', status: 503, retryAfterMs: undefined }))).toBe(8);
  });

  it('never waits less than the backoff for a Retry-After of 0 (or a date past), and counts it as a failure', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    const waits = Array.from({ length: 4 }, () => seconds(delays.after({ kind: 'refused', status: 429, retryAfterMs: 0 })));
    expect(waits).toEqual([2, 4, 8, 16]);
    expect(seconds(delays.after({ kind: 'refused', status: 503, retryAfterMs: 5_000 }))).toBe(32);
  });

  it('waits 10 minutes after the relay refused access', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0.5);
    expect(delays.after({ kind: 'refused', status: 401, retryAfterMs: undefined })).toBe(600_000);
    expect(delays.after({ kind: 'refused', status: 403, retryAfterMs: 5_000 })).toBe(600_000);
  });
});
