import { describe, expect, it } from '@jest/globals';
import { RELAY_TIMING } from '../../src/push/relay-timing.js';

describe('RELAY_TIMING', () => {
  it('is the production clock of relay mode', () => {
    expect(RELAY_TIMING).toEqual({
      // A silent stream is dropped after 100 s: ntfy sends a keepalive every 45 s.
      aliveMs: 100_000,
      firstReconnectMs: 1_000,
      maxReconnectMs: 60_000,
      stableMs: 60_000,
      refusedRetryMs: 10 * 60_000,
      maxRetryAfterMs: 10 * 60_000,
      faultAfterMs: 60_000,
      staleMs: 120_000,
    });
    expect(Object.isFrozen(RELAY_TIMING)).toBe(true);
  });
});
