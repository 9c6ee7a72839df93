/**
 * The soak's outage figures from what HomeKit showed: the down periods of a minute or more (the
 * doorbells' StatusFault, merged), which opened the Doorbell Alerts sensor no sooner than the rule
 * allows and kept it open to their end, the openings nothing explains, and the delays.
 */
import { describe, expect, it } from '@jest/globals';
import { downPeriods, type SensorRecord, type Span } from '../../scripts/soak/alerts-sensor.js';
import { outageFigures } from '../../scripts/soak/outages.js';

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
