/**
 * The soak's checks: a week that keeps every rule passes, and each way a week can go wrong (a lost
 * ring, an outage that did not open the sensor, a false opening, a late close, a missing or doubled
 * warning or recovery, a leak, too few outages or refreshes, a key too many or too few) fails it.
 */
import { describe, expect, it } from '@jest/globals';
import { RESULT_KEYS, violations, type SoakResults, type Targets } from '../../scripts/soak/results.js';

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
