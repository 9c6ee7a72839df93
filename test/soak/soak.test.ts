/**
 * The soak's parts that need no clock or process of their own: its checks, outage figures, ring ledger
 * and week plan (the fresh-clone smoke test runs the whole quick week, checked by `test/support/quick-week.ts`).
 *
 * The checks: a week that keeps every rule passes, and each way a week can go wrong (a lost
 * ring, a stale ring not counted late, a ring published while Homebridge was down and not shown once
 * it was back, too few restarts, an expiry the sensor showed late or never, an outage that did not
 * open the sensor, a false opening, a late close, a missing or doubled warning or recovery, a leak,
 * too few outages or refreshes, a key too many or too few) fails it.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { downPeriods, type SensorRecord, type Span } from '../../scripts/soak/alerts-sensor.js';
import { datedFaults, outageFigures } from '../../scripts/soak/outages.js';
import { RelayDowns } from '../../scripts/soak/relay-downs.js';
import { RESULT_KEYS, violations, type SoakResults, type Targets } from '../../scripts/soak/results.js';
import { RingLedger } from '../../scripts/soak/ring-ledger.js';
import {
  CUT_PAIR_BEFORE_END_MS,
  DAY_MS,
  FULL_WEEK,
  HALF_OPEN_CUT_MS,
  HALF_OPEN_RING_AFTER_MS,
  HOMEBRIDGE_DOWN_MS,
  LIST_READ_MS,
  OFFLINE_AT_MS,
  planWeek,
  QUICK_WEEK,
  RING_SPACING_MS,
  type WeekPlan,
} from '../../scripts/soak/week-plan.js';

const TARGETS: Targets = { minOutages: 3, refreshes: 14, homebridgeRestarts: 2 };

function goodWeek(): SoakResults {
  return {
    simulatedDays: 7.06,
    refreshes: 14,
    homebridgeRestarts: 2,
    ringsDuringRestart: 4,
    ringsDuringRestartDelivered: 4,
    expiryToSensorMaxMinutes: 13.5,
    lowBatteryWarnings: 1,
    offlineOutages: 1,
    accounts: { otherRingsDuringExpiry: 12, otherRingsDuringExpiryDelivered: 12, otherFaultsDuringExpiry: 0, expiryWarnings: 1, expiryWarningsNamingAccount: 1 },
    alerts: { sent: 1_000, delivered: 985, caughtUp: 8, stale: 3, late: 3, afterExpiry: 12, lost: 0 },
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
    expect(Object.keys(results.accounts)).toEqual(RESULT_KEYS.accounts);
    expect(Object.keys(results.alerts)).toEqual(RESULT_KEYS.alerts);
    expect(Object.keys(results.outages)).toEqual(RESULT_KEYS.outages);
    expect(Object.keys(results.resources)).toEqual(RESULT_KEYS.resources);
  });

  it.each<[string, (results: SoakResults) => void, RegExp]>([
    ['a lost ring', (r) => Object.assign(r.alerts, { delivered: 984, lost: 1 }), /1 rings lost/],
    ['a stale ring not counted late', (r) => Object.assign(r.alerts, { late: 2 }), /3 rings dropped as stale but 2 counted late/],
    ['a late ring counted twice', (r) => Object.assign(r.alerts, { late: 4 }), /3 rings dropped as stale but 4 counted late/],
    ['a ring published while Homebridge was down and not shown', (r) => Object.assign(r, { ringsDuringRestartDelivered: 3 }), /3 of the 4 rings published while Homebridge was down/],
    ['no ring published while Homebridge was down', (r) => Object.assign(r, { ringsDuringRestart: 0, ringsDuringRestartDelivered: 0 }), /no ring was published while Homebridge was down/],
    ['too few Homebridge restarts', (r) => Object.assign(r, { homebridgeRestarts: 1 }), /1 Homebridge restarts, fewer than 2/],
    ['an expiry the sensor showed after the next refresh', (r) => Object.assign(r, { expiryToSensorMaxMinutes: 121 }), /opened 121 minutes after the session expired \(at most 16\)/],
    ['an expiry the sensor showed a little late', (r) => Object.assign(r, { expiryToSensorMaxMinutes: 16.1 }), /opened 16.1 minutes after/],
    ['a low battery never warned of', (r) => Object.assign(r, { lowBatteryWarnings: 0 }), /0 warnings that a battery is low, for one battery that ran low/],
    ['a low battery warned of again after a restart', (r) => Object.assign(r, { lowBatteryWarnings: 2 }), /2 warnings that a battery is low/],
    ['an offline hour the plugin never showed', (r) => Object.assign(r, { offlineOutages: 0 }), /0 outages for the doorbell offline for an hour/],
    ['an offline hour shown as two outages', (r) => Object.assign(r, { offlineOutages: 2 }), /2 outages for the doorbell offline for an hour/],
    ['no ring at the other account while the session had expired', (r) => Object.assign(r.accounts, { otherRingsDuringExpiry: 0, otherRingsDuringExpiryDelivered: 0 }), /other account's doorbells did not ring/],
    ['a ring of the other account not shown while the session had expired', (r) => Object.assign(r.accounts, { otherRingsDuringExpiryDelivered: 11 }), /11 of the other account's 12 rings delivered/],
    ['the other account\'s doorbells in fault while the session had expired', (r) => Object.assign(r.accounts, { otherFaultsDuringExpiry: 2 }), /other account's doorbells were put in fault 2 times/],
    ['no warning while the session had expired', (r) => Object.assign(r.accounts, { expiryWarnings: 0, expiryWarningsNamingAccount: 0 }), /0 warnings that alerts stopped while the session had expired/],
    ['a warning that does not name the expired account', (r) => Object.assign(r.accounts, { expiryWarningsNamingAccount: 0 }), /does not name the expired account/],
    ['an expiry the sensor never showed', (r) => Object.assign(r, { expiryToSensorMaxMinutes: null }), /did not open after the session expired/],
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

  it('dates a fault that began while the relay stream was down from a minute after it went down', () => {
    // The stream went silent at 1,000 s (its last keepalive) and opened again at 1,152 s; the plugin
    // found it silent at 1,100 s and set the fault then. Another doorbell's fault, with the stream up, stays as it was.
    const relayDowns = [span(1_000, 1_152)];
    const faults = [[span(1_100, 1_152)], [span(5_000, 5_100)]];

    expect(datedFaults(faults, relayDowns)).toEqual([[span(1_060, 1_152)], [span(5_000, 5_100)]]);
    // A fault set later than a minute after the stream went down dates from then; one set sooner stays.
    expect(datedFaults([[span(1_030, 1_152)]], relayDowns)).toEqual([[span(1_030, 1_152)]]);
  });

  it('counts a half-open cut as an outage from the stream\'s last sign of life, and its sensor at 120 s as no false opening', () => {
    const relayDowns = [span(1_000, 1_152)];
    const faults = [[span(1_100, 1_152)], [span(1_100, 1_152)]];
    const fixed = outageFigures({ faults, open: [span(1_120, 1_152)], warnings: 1, recoveries: 1 }, END_MS, relayDowns).figures;
    expect(fixed).toEqual({ seen: 1, opened: 1, falseOpens: 0, maxOpenDelayS: 60, maxCloseDelayS: 0, warnings: 1, recoveries: 1 });

    // Its minute counted from the moment the fault was set, the sensor would open at 1,160 s: after the stream was back.
    const notOpened = outageFigures({ faults, open: [], warnings: 0, recoveries: 0 }, END_MS, relayDowns).figures;
    expect(notOpened).toMatchObject({ seen: 1, opened: 0 });
    // Without the stream's down moment, the 52 s fault is no outage and the opening a false one.
    expect(outageFigures({ faults, open: [span(1_120, 1_152)], warnings: 1, recoveries: 1 }, END_MS).figures).toMatchObject({ seen: 0, falseOpens: 1 });
  });

  it('times the long cut\'s opening from a minute after the last keepalive, so a sensor that waits for the watchdog is late', () => {
    const relayDowns = [span(1_000, 2_830)];
    const faults = [[span(1_100, 2_830)]];
    const late = outageFigures({ faults, open: [span(1_160, 2_830)], warnings: 1, recoveries: 1 }, END_MS, relayDowns).figures;

    expect(late).toMatchObject({ seen: 1, opened: 1, maxOpenDelayS: 100 });
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
 * When the relay stream was down, from the soak's side: from the first break (a later one before it
 * is back changes nothing) to the stream's next opening or the platform's next launch.
 */
describe('the soak\'s record of the relay stream\'s breaks', () => {
  it('keeps the first break until the stream opens or the platform launches again', () => {
    const downs = new RelayDowns();
    downs.down(1_000);
    downs.down(1_100);
    downs.up(1_152);
    downs.up(1_200);
    downs.down(5_000);
    downs.up(5_030);
    downs.down(9_000);

    expect(downs.record()).toEqual([
      { fromMs: 1_000, toMs: 1_152 },
      { fromMs: 5_000, toMs: 5_030 },
      { fromMs: 9_000, toMs: undefined },
    ]);
  });
});

/**
 * The soak's week plan: the same seed gives the same week, and every week keeps the contract's
 * shape: its rings at least 10 s apart at any one doorbell and inside the span, the planned cases'
 * rings among them (one at each doorbell while Homebridge is down, two 10 s apart late in the long cut,
 * the half-open cut's) with no other ring near a restart or the half-open cut, its relay restarts back
 * within 30 s and clear of the cuts, the web page and Homebridge's restarts, each fault once and where
 * the week says, the faults long enough to open the sensor apart from each other.
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

  // Homebridge restarted, then killed, each for 30 s, with a ring at each doorbell (two at most) meanwhile and no other for minutes around.
  expect(plan.homebridgeRestarts.map(({ abrupt }) => abrupt)).toEqual([false, true]);
  for (const { atMs } of plan.homebridgeRestarts) {
    const near = plan.rings.filter((ring) => ring.atMs > atMs - 5 * 60_000 && ring.atMs < atMs + HOMEBRIDGE_DOWN_MS + 5 * 60_000);
    expect(near).toEqual(
      Array.from({ length: Math.min(doorbells, 2) }, (_, doorbell) => ({ atMs: atMs + (doorbell + 1) * (HOMEBRIDGE_DOWN_MS / 3), doorbell })),
    );
    expect(Math.abs(atMs - middle(plan.homeCut))).toBeGreaterThan(HOUR_MS);
    expect(atMs + HOMEBRIDGE_DOWN_MS).toBeLessThan(spanMs - 15 * 60_000);
  }
  // The half-open cut: 2.5 minutes, one ring after its keepalive and no other near it, clear of the long cut.
  expect(plan.halfOpenCut.forMs).toBe(HALF_OPEN_CUT_MS);
  const afterKeepalive = plan.rings.filter((ring) => ring.afterKeepalive === true);
  expect(afterKeepalive).toEqual([{ atMs: plan.halfOpenCut.atMs + HALF_OPEN_RING_AFTER_MS, doorbell: afterKeepalive[0].doorbell, afterKeepalive: true }]);
  const clearUntil = plan.halfOpenCut.atMs + 60_000 + HALF_OPEN_CUT_MS + 5 * 60_000;
  expect(plan.rings.filter(({ atMs }) => atMs > plan.halfOpenCut.atMs - 5 * 60_000 && atMs < clearUntil)).toEqual(afterKeepalive);
  expect(plan.halfOpenCut.atMs + HOUR_MS).toBeLessThan(plan.homeCut.atMs);
  // Two rings 10 s apart at one doorbell, the later 20 s before the long cut ends.
  const cutEnd = plan.homeCut.atMs + plan.homeCut.forMs;
  const pair = plan.rings.filter(({ atMs }) => atMs === cutEnd - CUT_PAIR_BEFORE_END_MS || atMs === cutEnd - CUT_PAIR_BEFORE_END_MS - RING_SPACING_MS);
  expect(pair).toHaveLength(2);
  expect(pair[0].doorbell).toBe(pair[1].doorbell);
  for (const { atMs } of plan.relayRestarts) {
    expect(Math.abs(atMs - middle(plan.halfOpenCut))).toBeGreaterThan(plan.halfOpenCut.forMs / 2 + HOUR_MS);
    for (const restart of plan.homebridgeRestarts) {
      expect(Math.abs(atMs - (restart.atMs + HOMEBRIDGE_DOWN_MS / 2))).toBeGreaterThan(HOMEBRIDGE_DOWN_MS / 2 + HOUR_MS);
    }
  }
  // The first doorbell offline for an hour: no ring at it until minutes after the list read that finds
  // it back, and that read comes before any other case (Homebridge's restart, a relay restart) begins.
  const { offline, battery } = plan;
  expect(offline).toEqual({ doorbell: 0, atMs: OFFLINE_AT_MS, forMs: HOUR_MS });
  const seenBackBy = offline.atMs + offline.forMs + LIST_READ_MS;
  expect(plan.rings.filter((ring) => ring.doorbell === offline.doorbell && ring.atMs > offline.atMs - 5 * 60_000 && ring.atMs < seenBackBy + 5 * 60_000)).toEqual([]);
  const otherCases = [plan.homeCut.atMs, plan.halfOpenCut.atMs, plan.webPage.atMs, ...plan.homebridgeRestarts.map(({ atMs }) => atMs)];
  expect(Math.min(...otherCases)).toBeGreaterThan(seenBackBy + 5 * 60_000);
  expect(Math.min(...plan.relayRestarts.map(({ atMs }) => atMs))).toBeGreaterThan(seenBackBy + HOUR_MS);
  // The other doorbell's battery runs low before Homebridge's restart and is replaced after the kill, before the span ends.
  expect(battery.doorbell).toBe(doorbells > 1 ? 1 : 0);
  expect(battery.healthy).toBeGreaterThan(20);
  expect(battery.low).toBeLessThanOrEqual(20);
  expect(battery.replaced).toBeGreaterThan(20);
  expect(battery.lowAtMs + LIST_READ_MS).toBeLessThan(plan.homebridgeRestarts[0].atMs);
  expect(battery.replacedAtMs).toBeGreaterThan(plan.homebridgeRestarts[1].atMs + HOMEBRIDGE_DOWN_MS + 5 * 60_000);
  expect(battery.replacedAtMs + LIST_READ_MS).toBeLessThan(spanMs);
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
