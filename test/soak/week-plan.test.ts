/**
 * The soak's week plan: the same seed gives the same week, and every week keeps the contract's
 * shape: its rings at least 10 s apart at any one doorbell and inside the span, its relay restarts
 * back within 30 s and clear of the home's cut and of the web page, each fault once and where the
 * week says, the faults long enough to open the sensor apart from each other.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DAY_MS, FULL_WEEK, planWeek, QUICK_WEEK, RING_SPACING_MS, type WeekPlan } from '../../scripts/soak/week-plan.js';

const HOUR_MS = 3_600_000;

function expectWellFormed(plan: WeekPlan, doorbells: number): void {
  const spanMs = plan.days * DAY_MS;
  expect(plan.rings.every(({ atMs }, index) => index === 0 || atMs >= plan.rings[index - 1].atMs)).toBe(true);
  expect(plan.rings.every(({ atMs, doorbell }) => atMs > 0 && atMs < spanMs && doorbell >= 0 && doorbell < doorbells)).toBe(true);
  for (let doorbell = 0; doorbell < doorbells; doorbell += 1) {
    const times = plan.rings.filter((ring) => ring.doorbell === doorbell).map(({ atMs }) => atMs);
    expect(times.every((atMs, index) => index === 0 || atMs - times[index - 1] >= RING_SPACING_MS)).toBe(true);
  }
  const middle = ({ atMs, forMs }: { atMs: number; forMs: number }): number => atMs + forMs / 2;
  for (const { atMs, downMs } of plan.relayRestarts) {
    expect(downMs).toBeGreaterThanOrEqual(5_000);
    expect(downMs).toBeLessThanOrEqual(30_000);
    expect(Math.abs(atMs - middle(plan.homeCut))).toBeGreaterThan(plan.homeCut.forMs / 2 + HOUR_MS);
    expect(Math.abs(atMs - middle(plan.webPage))).toBeGreaterThan(plan.webPage.forMs / 2 + HOUR_MS);
    expect(atMs + downMs).toBeLessThan(spanMs);
  }
  expect(plan.homeCut.forMs).toBe(30 * 60_000);
  expect(plan.webPage.forMs).toBe(10 * 60_000);
  // An hour after the cut, and over before the session can expire: two outages, never one.
  expect(plan.webPage.atMs).toBeGreaterThan(plan.homeCut.atMs + plan.homeCut.forMs + HOUR_MS);
  expect(plan.webPage.atMs + plan.webPage.forMs).toBeLessThan(plan.sessionExpiry.beforeRefreshAfterMs - plan.sessionExpiry.expiryLeadMs - HOUR_MS / 4);
  expect(plan.diskFull.forMs).toBe(HOUR_MS);
  expect(plan.serviceUnavailable.forMs).toBe(2 * HOUR_MS);
  expect(plan.hostClock.jumpMs).toBe(HOUR_MS);
  expect(plan.hostClock.backAtMs).toBeGreaterThan(plan.hostClock.forwardAtMs);
  expect(plan.hostClock.backAtMs).toBeLessThan(spanMs);
  expect(plan.diskFull.atMs + plan.diskFull.forMs).toBeLessThan(spanMs);
  expect(plan.signInAfterMs).toBe(10 * 60_000);
}

describe('the soak\'s week plan', () => {
  it('is the contract\'s week: 7 days, 14 refreshes, 1,000 rings, 6 relay restarts, the session expiring on day 3', () => {
    const plan = planWeek({ ...FULL_WEEK, doorbells: 2 }, 1);

    expect([plan.days, plan.refreshes, plan.rings.length, plan.relayRestarts.length]).toEqual([7, 14, 1_000, 6]);
    expect(plan.sessionExpiry.beforeRefreshAfterMs).toBeGreaterThan(2 * DAY_MS);
    expect(plan.sessionExpiry.beforeRefreshAfterMs).toBeLessThan(3 * DAY_MS);
    expectWellFormed(plan, 2);
  });

  it('is the same week for the same seed, and another for another', () => {
    const plan = (seed: number): WeekPlan => planWeek({ ...QUICK_WEEK, doorbells: 2 }, seed);

    expect(plan(42)).toEqual(plan(42));
    expect(plan(43).rings).not.toEqual(plan(42).rings);
  });

  it('keeps its shape whatever the seed, quick or full, for one to three doorbells', () => {
    fc.assert(
      fc.property(fc.nat(), fc.boolean(), fc.integer({ min: 1, max: 3 }), (seed, quick, doorbells) => {
        const plan = planWeek({ ...(quick ? QUICK_WEEK : FULL_WEEK), doorbells }, seed);
        expectWellFormed(plan, doorbells);
      }),
      { numRuns: 30 },
    );
  });
});
