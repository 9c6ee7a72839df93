/**
 * The calls waiting for the relay stream to open: each ends once, by its timeout or by endAll, and one
 * that timed out is forgotten, so that a relay refusing for hours piles up nothing.
 */
import { describe, expect, it } from '@jest/globals';
import { ConnectWaits } from '../../../src/push/relay/subscription.js';

describe('ConnectWaits', () => {
  it('forgets each wait that timed out: endAll afterwards asks none of them for its outcome again', async () => {
    const waits = new ConnectWaits();
    let asked = 0;
    const outcome = () => {
      asked += 1;
      return false;
    };

    await expect(Promise.all(Array.from({ length: 50 }, (_, index) => waits.wait(1 + (index % 5), outcome)))).resolves.toEqual(Array(50).fill(false));
    expect(asked).toBe(50);

    waits.endAll();
    expect(asked).toBe(50);
  });

  it('ends every pending wait at once with its outcome, and each only once', async () => {
    const waits = new ConnectWaits();
    let asked = 0;
    const pending = [waits.wait(60_000, () => ++asked > 0), waits.wait(60_000, () => ++asked > 0)];

    waits.endAll();
    waits.endAll();

    await expect(Promise.all(pending)).resolves.toEqual([true, true]);
    expect(asked).toBe(2);
  });
});
