import { describe, expect, it } from '@jest/globals';
import { RELAY_TIMING } from '../../src/push/relay-timing.js';

describe('RELAY_TIMING', () => {
  it('is the production clock of relay mode', () => {
    expect(RELAY_TIMING).toEqual({
      // A silent stream is dropped after 100 s: ntfy sends a keepalive every 45 s.
      aliveMs: 100_000,
      // Steps from 2 s, doubling to 60 s, each wait a random 50 to 100 % of its step: 1 to 2 s first, 30 to 60 s at the cap.
      reconnect: { firstMs: 2_000, factor: 2, maxMs: 60_000, jitter: true },
      stableMs: 60_000,
      refusedRetryMs: 10 * 60_000,
      maxRetryAfterMs: 10 * 60_000,
      faultAfterMs: 60_000,
      staleMs: 120_000,
    });
    expect(Object.isFrozen(RELAY_TIMING)).toBe(true);
  });
});
