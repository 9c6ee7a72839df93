/**
 * Every account's requests to the doorbell service take the same 8 slots: two accounts of ten doorbells
 * each, starting at once, never have more than 8 requests in flight together, list reads included.
 */
import { describe, expect, it } from '@jest/globals';
import type { PlatformConfig } from 'homebridge';
import type { RecordedRequest } from '../simulator/types.js';
import { ACCOUNT, platformConfig, waitFor } from '../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from './support/platform-testbed.js';

const doorbells = (first: number, label: string) => Array.from({ length: 10 }, (_, index) => ({ deviceId: String(first + index), name: `${label} ${index + 1}` }));
const HOME = { label: 'Home', email: ACCOUNT.email, code: ACCOUNT.code, doorbells: doorbells(4001, 'Home Door') };
const CABIN = { label: 'Cabin', email: 'cabin@example.com', code: '222222', doorbells: doorbells(5001, 'Cabin Door') };

/** The most doorbell service requests in flight at once: just before an answer is the peak. */
let peak = 0;
const testbed = usePlatformTestbed(
  HOME.doorbells.map(({ deviceId }) => deviceId),
  {
    onSimulatorRequest: (answered: RecordedRequest) => {
      if (answered.service === 'doorbell') {
        const pending = testbed.sim.requests.filter(({ service, status }) => service === 'doorbell' && status === 0);
        peak = Math.max(peak, pending.length + 1);
      }
    },
  },
);

describe('several accounts and the request slots', () => {
  it('never have more than 8 doorbell service requests in flight, all accounts together', async () => {
    testbed.sim.addAccount({ email: CABIN.email, code: CABIN.code, doorbells: CABIN.doorbells.map(({ deviceId }) => deviceId) });
    // Each answer takes a while, so the two accounts' subscriptions would overlap if each had slots of its own.
    testbed.sim.injectFault('subscribe', { delayMs: 200, times: 1_000 });
    const { account, doorbellServerUrl, doorbells: unused, ...rest } = platformConfig(testbed.sim, testbed.pushPort);
    void unused;
    const block = {
      ...rest,
      accounts: [HOME, CABIN].map((entry) => ({
        label: entry.label,
        account: { ...(account as Record<string, unknown>), email: entry.email, code: entry.code },
        doorbellServerUrl,
        doorbells: entry.doorbells,
      })),
    } as PlatformConfig;
    peak = 0;

    const platform = testbed.launch({ block });

    await waitFor(() => allConfirmed(platform, [...HOME.doorbells, ...CABIN.doorbells]), 'every doorbell subscribed', 15_000);
    expect(testbed.sim.requestsOf(CABIN.email).filter(({ route }) => route === 'subscribe')).toHaveLength(10);
    expect(testbed.sim.requestsOf(HOME.email).filter(({ route }) => route === 'subscribe')).toHaveLength(10);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(8);
  });
});
