import { describe, expect, it } from '@jest/globals';
import { ReconnectDelays } from '../../src/push/relay-backoff.js';
import { RELAY_TIMING } from '../../src/push/relay-timing.js';

const FAILED = { kind: 'failed' } as const;

describe('ReconnectDelays with the production timing', () => {
  it('backs off from 1 s, doubling to 60 s, when the jitter adds nothing', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0);
    expect(Array.from({ length: 9 }, () => delays.after(FAILED))).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60].map((s) => s * 1000));
  });

  it('adds a random 0 to 100 % of each delay, never past 60 s', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0.999);
    const waits = Array.from({ length: 8 }, () => delays.after(FAILED));
    expect(waits.slice(0, 3).map((ms) => Math.round(ms))).toEqual([1999, 3998, 7996]);
    expect(Math.max(...waits)).toBe(60_000);
  });

  it('starts over after a stream that lived 60 s, not after a shorter one', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0);
    delays.after(FAILED);
    delays.after(FAILED);
    expect(delays.after({ kind: 'ended', livedMs: 59_999 })).toBe(4_000);
    expect(delays.after({ kind: 'ended', livedMs: 60_000 })).toBe(1_000);
  });

  it('honours Retry-After on 429 and 503, up to 10 minutes', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0);
    expect(delays.after({ kind: 'refused', status: 429, retryAfterMs: 30_000 })).toBe(30_000);
    expect(delays.after({ kind: 'refused', status: 503, retryAfterMs: 86_400_000 })).toBe(600_000);
    expect(delays.after({ kind: 'refused', status: 503, retryAfterMs: undefined })).toBe(1_000);
  });

  it('waits 10 minutes after the relay refused access', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0.5);
    expect(delays.after({ kind: 'refused', status: 401, retryAfterMs: undefined })).toBe(600_000);
    expect(delays.after({ kind: 'refused', status: 403, retryAfterMs: 5_000 })).toBe(600_000);
  });
});
