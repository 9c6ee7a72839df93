import { jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { FAST } from '../../scripts/lib/platform-harness.js';
import { ALERTS_OPEN_AFTER_MS, type AlertsClock } from '../../src/alerts/alerts-rule.js';
import { SCHEDULE_TIMING } from '../../src/connection/schedule.js';
import type { PlatformTiming } from '../../src/platform.js';

/** Real time, which the tests' fake timers leave alone (they never fake `hrtime`). */
const realMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Under jest's fake timers: moves the fake clock on by `stepMs` each turn (0: not at all, only running
 * what is due), letting real I/O run between turns, until `condition` holds. Rejects after `timeoutMs`
 * of real time, so a wait for something that never comes fails with its name.
 */
export async function runUntil(condition: () => boolean | Promise<boolean>, what: string, stepMs = 1, timeoutMs = 15_000): Promise<void> {
  const deadline = realMs() + timeoutMs;
  while (!(await condition())) {
    if (realMs() > deadline) {
      throw new Error(`Gave up waiting for ${what}`);
    }
    await jest.advanceTimersByTimeAsync(stepMs);
    await sleep(1);
  }
}

/** The Doorbell Alerts rule's clock on jest's fake timers: its minute passes as the fake clock moves. */
export const FAKE_ALERTS_CLOCK: AlertsClock = {
  monotonic: () => jest.now(),
  wall: () => Date.now(),
  after: (ms, action) => {
    const timer = setTimeout(action, ms);
    return () => clearTimeout(timer);
  },
};

/** The production schedule (refresh every 12 hours, the doorbell list every 15 minutes) and the alerts' minute, on the fake clock. */
export const PRODUCTION_SCHEDULE: PlatformTiming = { ...FAST, schedule: SCHEDULE_TIMING, alerts: { openAfterMs: ALERTS_OPEN_AFTER_MS, clock: FAKE_ALERTS_CLOCK } };
