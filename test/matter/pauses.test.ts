/** Waits that end at once when their owner stops, leaving no timer behind. */
import { describe, expect, it } from '@jest/globals';
import { Pauses } from '../../src/matter/pauses.js';

describe('Pauses', () => {
  it('resolves true after the time, and after a turn of the event loop for 0', async () => {
    const pauses = new Pauses();
    const started = performance.now();

    expect(await pauses.pause(0)).toBe(true);
    expect(await pauses.pause(30)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });

  it('ends every pending wait with false when disposed, and every later one at once', async () => {
    const pauses = new Pauses();
    const started = performance.now();
    const pending = [pauses.pause(60_000), pauses.pause(0), pauses.pause(60_000)];

    pauses.dispose();

    expect(await Promise.all(pending)).toEqual([false, false, false]);
    expect(await pauses.pause(60_000)).toBe(false);
    expect(pauses.disposed).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
