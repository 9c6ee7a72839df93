/**
 * The soak's parts that need no clock or process of their own: its checks, outage figures, ring ledger
 * and week plan (`quick-week.test.ts` runs the whole soak).
 *
 * The checks: a week that keeps every rule passes, and each way a week can go wrong (a lost
 * ring, an outage that did not open the sensor, a false opening, a late close, a missing or doubled
 * warning or recovery, a leak, too few outages or refreshes, a key too many or too few) fails it.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { downPeriods, type SensorRecord, type Span } from '../../scripts/soak/alerts-sensor.js';
import { outageFigures } from '../../scripts/soak/outages.js';
import { RESULT_KEYS, violations, type SoakResults, type Targets } from '../../scripts/soak/results.js';
import { RingLedger } from '../../scripts/soak/ring-ledger.js';
import { DAY_MS, FULL_WEEK, planWeek, QUICK_WEEK, RING_SPACING_MS, type WeekPlan } from '../../scripts/soak/week-plan.js';

const TARGETS: Targets = { minOutages: 3, refreshes: 14 };

function goodWeek(): SoakResults {
  return {
    simulatedDays: 7.06,
    refreshes: 14,
    alerts: { sent: 1_000, delivered: 985, caughtUp: 4, stale: 3, afterExpiry: 12, lost: 0 },
    outages: { seen: 3, opened: 3, falseOpens: 0, maxOpenDelayS: 60, maxCloseDelayS: 0.5, warnings: 3, recoveries: 3 },
    resources: { handlesAfterLaunch: 18, handlesAfterWeek: 18, heapDeltaMiB: 0.7 },
    wallSeconds: 95,
  };
}

/** A good week with one part changed. */
function weekWith(change: (results: SoakResults) => void): SoakResults {
  const results = goodWeek();
  change(results);
  return results;
}

describe('the soak\'s checks', () => {
  it('pass a week that keeps every rule, whose keys are exactly those of soak-results.json', () => {
    const results = goodWeek();

    expect(violations(results, TARGETS)).toEqual([]);
    expect(Object.keys(results)).toEqual(RESULT_KEYS.top);
    expect(Object.keys(results.alerts)).toEqual(RESULT_KEYS.alerts);
    expect(Object.keys(results.outages)).toEqual(RESULT_KEYS.outages);
    expect(Object.keys(results.resources)).toEqual(RESULT_KEYS.resources);
  });

  it.each<[string, (results: SoakResults) => void, RegExp]>([
    ['a lost ring', (r) => Object.assign(r.alerts, { delivered: 984, lost: 1 }), /1 rings lost/],
    ['a ring in no count', (r) => Object.assign(r.alerts, { delivered: 984 }), /1000 rings sent but 999 accounted for/],
    ['more caught up than delivered', (r) => Object.assign(r.alerts, { caughtUp: 986 }), /caught up/],
    ['an outage that did not open the sensor', (r) => Object.assign(r.outages, { opened: 2, warnings: 2, recoveries: 2 }), /3 outages seen but 2 opened/],
    ['too few outages', (r) => Object.assign(r.outages, { seen: 2, opened: 2, warnings: 2, recoveries: 2 }), /2 outages seen, fewer than 3/],
    ['a false opening', (r) => Object.assign(r.outages, { falseOpens: 1 }), /opened 1 times with no outage/],
    ['a late opening', (r) => Object.assign(r.outages, { maxOpenDelayS: 66 }), /opened 66 s after/],
    ['a late close', (r) => Object.assign(r.outages, { maxCloseDelayS: 5.1 }), /closed 5.1 s after/],
    ['a missing warning', (r) => Object.assign(r.outages, { warnings: 2 }), /2 warnings for 3 outages/],
    ['a doubled recovery line', (r) => Object.assign(r.outages, { recoveries: 4 }), /4 recovery lines for 3 outages/],
    ['a handle more after the week', (r) => Object.assign(r.resources, { handlesAfterWeek: 19 }), /19 handles after the week, 18 after the launch/],
    ['a heap grown by more than 1 MiB', (r) => Object.assign(r.resources, { heapDeltaMiB: 1.01 }), /heap grew by 1.01 MiB/],
    ['a heap figure that is not a number', (r) => Object.assign(r.resources, { heapDeltaMiB: Number.NaN }), /heap grew by NaN/],
    ['too few refreshes', (r) => Object.assign(r, { refreshes: 13 }), /13 refreshes, fewer than 14/],
    ['a key too many', (r) => Object.assign(r.alerts, { duplicates: 0 }), /not exactly those/],
    ['a key too few', (r) => delete (r as Partial<SoakResults>).wallSeconds, /not exactly those/],
  ])('fail on %s', (_what, change, expected) => {
    const broken = violations(weekWith(change), TARGETS);

    expect(broken).toHaveLength(1);
    expect(broken[0]).toMatch(expected);
  });
});

/**
 * The soak's outage figures from what HomeKit showed: the down periods of a minute or more (the
 * doorbells' StatusFault, merged), which opened the Doorbell Alerts sensor no sooner than the rule
 * allows and kept it open to their end, the openings nothing explains, and the delays.
 */
const S = 1_000;
const span = (fromS: number, toS: number | undefined): Span => ({ fromMs: fromS * S, toMs: toS === undefined ? undefined : toS * S });
const END_MS = 100_000 * S;

/** Two doorbells down together for 10 minutes from 1,000 s, the first alone for 30 s at 5,000 s, both again from 9,000 s for 2 minutes. */
const FAULTS: Span[][] = [
  [span(0, 3), span(1_000, 1_600), span(5_000, 5_030), span(9_000, 9_120)],
  [span(0, 4), span(1_000, 1_601), span(9_010, 9_120)],
];

function record(open: Span[], lines = open.length): SensorRecord {
  return { faults: FAULTS, open, warnings: lines, recoveries: lines };
}

describe('the soak\'s outage figures', () => {
  it('merges the doorbells\' faults into down periods', () => {
    expect(downPeriods(FAULTS)).toEqual([span(0, 4), span(1_000, 1_601), span(5_000, 5_030), span(9_000, 9_120)]);
  });

  it('counts each outage that opened the sensor in time and kept it open, with the delays from when the plugin knew', () => {
    const { figures, outages } = outageFigures(record([span(1_060, 1_603), span(9_061, 9_120)]), END_MS);

    expect(figures).toEqual({ seen: 2, opened: 2, falseOpens: 0, maxOpenDelayS: 61, maxCloseDelayS: 2, warnings: 2, recoveries: 2 });
    expect(outages.map(({ opening }) => opening)).toEqual([span(1_060, 1_603), span(9_061, 9_120)]);
  });

  it('finds the opening in a short break, the one before the minute is up, the second within one outage, and the missing one', () => {
    const early = outageFigures(record([span(1_010, 1_601), span(9_060, 9_120)]), END_MS).figures;
    expect(early).toMatchObject({ seen: 2, opened: 1, falseOpens: 1 });

    const short = outageFigures(record([span(1_060, 1_601), span(5_020, 5_030), span(9_060, 9_120)]), END_MS).figures;
    expect(short).toMatchObject({ seen: 2, opened: 2, falseOpens: 1 });

    const twice = outageFigures(record([span(1_060, 1_200), span(1_300, 1_601), span(9_060, 9_120)]), END_MS).figures;
    expect(twice).toMatchObject({ seen: 2, opened: 1, falseOpens: 1 });

    const missing = outageFigures(record([span(9_060, 9_120)]), END_MS).figures;
    expect(missing).toMatchObject({ seen: 2, opened: 1, falseOpens: 0, warnings: 1 });
  });

  it('times the opening from the fault that lasted a minute, not from an earlier short one of the same period', () => {
    const faults = [[span(100, 130)], [span(120, 300)]];
    const { figures } = outageFigures({ faults, open: [span(180, 300)], warnings: 1, recoveries: 1 }, END_MS);

    expect(figures).toMatchObject({ seen: 1, opened: 1, falseOpens: 0, maxOpenDelayS: 60 });
  });

  it('reports a sensor that closed late, or not at all, and one that closed while a doorbell was still down', () => {
    const late = outageFigures(record([span(1_060, 1_611), span(9_060, 9_120)]), END_MS).figures;
    expect(late.maxCloseDelayS).toBe(10);

    const stuck = outageFigures(record([span(1_060, undefined)]), END_MS).figures;
    expect(stuck).toMatchObject({ seen: 2, opened: 1, falseOpens: 0 });

    const closedEarly = outageFigures(record([span(1_060, 1_500), span(9_060, 9_120)]), END_MS).figures;
    expect(closedEarly).toMatchObject({ seen: 2, opened: 1 });
  });
});

/**
 * The soak's ring ledger: each outcome the plugin shows (a button event, a stale drop) belongs to
 * the oldest ring published and not yet accounted for; a ring skipped over is lost; a ring that came
 * through a stream opened after its publish was caught up; every ring ends in exactly one count.
 */
const [FRONT, BACK] = ['1234567', '9007199254740993'];

describe('the soak\'s ring ledger', () => {
  it('counts live deliveries, catch-ups after a reconnect, stale drops and rings the service would not send', () => {
    const ledger = new RingLedger([FRONT, BACK, FRONT, BACK, FRONT, BACK]);
    const [live, notSent, oldOne, recent, alsoRecent, never] = ledger.rings;
    ledger.streamOpened();
    ledger.publishing(live);
    ledger.rang(FRONT);
    ledger.notSent(notSent);
    // The stream breaks; three rings wait in the relay's cache, the oldest too old by the time it is back.
    ledger.publishing(oldOne);
    ledger.publishing(recent);
    ledger.publishing(alsoRecent);
    ledger.streamOpened();
    ledger.droppedStale();
    ledger.rang(BACK);
    ledger.rang(FRONT);
    ledger.publishing(never);

    expect(ledger.counts()).toEqual({ sent: 6, delivered: 3, caughtUp: 2, stale: 1, afterExpiry: 1, lost: 1 });
    expect(ledger.rings.map(({ outcome }) => outcome)).toEqual(['delivered', 'afterExpiry', 'stale', 'delivered', 'delivered', undefined]);
    expect(ledger.unexplained).toBe(0);
  });

  it('counts a ring skipped over as lost, and an event or a drop no ring explains apart', () => {
    const ledger = new RingLedger([FRONT, BACK, FRONT]);
    ledger.streamOpened();
    ledger.rings.forEach((ring) => ledger.publishing(ring));
    ledger.rang(FRONT);
    // BACK's ring vanished without a trace: the next FRONT event passes it by.
    ledger.rang(FRONT);
    ledger.rang(BACK);
    ledger.droppedStale();

    expect(ledger.counts()).toMatchObject({ delivered: 2, lost: 1 });
    expect(ledger.unexplained).toBe(2);
  });

  it('offers a refused ring again in its place, and counts one given up on as lost', () => {
    const ledger = new RingLedger([FRONT, FRONT]);
    const [first, second] = ledger.rings;
    ledger.publishing(first);
    ledger.refused(first, false);
    ledger.publishing(first);
    ledger.rang(FRONT);
    ledger.publishing(second);
    ledger.refused(second, true);

    expect(ledger.counts()).toMatchObject({ sent: 2, delivered: 1, lost: 1 });
    expect(ledger.unexplained).toBe(0);
  });
});

/**
 * The soak's week plan: the same seed gives the same week, and every week keeps the contract's
 * shape: its rings at least 10 s apart at any one doorbell and inside the span, its relay restarts
 * back within 30 s and clear of the home's cut and of the web page, each fault once and where the
 * week says, the faults long enough to open the sensor apart from each other.
 */
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
