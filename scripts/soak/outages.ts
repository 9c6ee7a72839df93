/**
 * The outage figures of a week from what the sensor watch recorded: the down periods of a minute or
 * more (the plugin's own view, its doorbells' StatusFault), which of them opened the sensor in time
 * and kept it open to their end, the openings nothing explains, and how long after the plugin knew
 * the sensor opened and closed.
 */
import { ALERTS_OPEN_AFTER_MS } from '../../src/alerts/alerts-rule.js';
import { RELAY_TIMING } from '../../src/push/relay/subscription.js';
import { downPeriods, firstMinuteDown, type SensorRecord, type Span } from './alerts-sensor.js';

export interface OutageFigures {
  /** Down periods of 60 s or more. */
  seen: number;
  /** Those during which the sensor opened, no sooner than the rule allows, and stayed open to their end. */
  opened: number;
  /** Openings with no such period behind them at that moment, and second openings within one. */
  falseOpens: number;
  /** The longest wait, in seconds, from the failure seen (the fault that lasted a minute began) to the opening. */
  maxOpenDelayS: number;
  /** The longest wait, in seconds, from the calls or the stream that ended a period to the closing. */
  maxCloseDelayS: number;
  warnings: number;
  recoveries: number;
}

/** One down period of a minute or more, for the summary. */
export interface SeenOutage {
  period: Span;
  opening: Span | undefined;
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/** An opening this much before the minute is up still counts as the rule's: a timer may round. */
const OPEN_TOLERANCE_MS = 1_000;

function contains(period: Span, atMs: number, endMs: number): boolean {
  return atMs >= period.fromMs && atMs <= (period.toMs ?? endMs);
}

/**
 * The doorbells' faults, each dated from when the plugin could have known: one that began while the
 * relay stream was down (a span of `relayDowns`) dates from a minute after the stream went down, when
 * that is sooner. A closed stream went down as it closed; a half-open one at its last sign of life,
 * which the plugin learns only when it has been silent for 100 s: its fault, set then, is due from a
 * minute after that sign of life, and the sensor's minute counts from there.
 */
export function datedFaults(faults: readonly Span[][], relayDowns: readonly Span[]): Span[][] {
  return faults.map((spans) =>
    spans.map((span) => {
      const down = relayDowns.find(({ fromMs, toMs }) => span.fromMs >= fromMs && (toMs === undefined || span.fromMs <= toMs));
      return down === undefined ? { ...span } : { ...span, fromMs: Math.min(span.fromMs, down.fromMs + RELAY_TIMING.faultAfterMs) };
    }),
  );
}

/** `relayDowns`: when the relay stream was down, from the soak's side of the wire (see datedFaults). */
export function outageFigures(seenRecord: SensorRecord, endMs: number, relayDowns: readonly Span[] = []): { figures: OutageFigures; outages: SeenOutage[] } {
  const record = { ...seenRecord, faults: datedFaults(seenRecord.faults, relayDowns) };
  const seen = downPeriods(record.faults)
    .map((period) => ({ period, openableAt: firstMinuteDown(record.faults, period, endMs) }))
    .filter((entry): entry is { period: Span; openableAt: number } => entry.openableAt !== undefined);
  const outages: Array<SeenOutage & { downSince: number }> = seen.map(({ period, openableAt }) => ({ period, opening: undefined, downSince: openableAt - ALERTS_OPEN_AFTER_MS }));
  let falseOpens = 0;
  for (const opening of record.open) {
    const index = seen.findIndex(({ period, openableAt }) => contains(period, opening.fromMs, endMs) && opening.fromMs >= openableAt - OPEN_TOLERANCE_MS);
    if (index === -1 || outages[index].opening !== undefined) {
      falseOpens += 1;
    } else {
      outages[index].opening = opening;
    }
  }
  const keptOpen = outages.filter(
    ({ period, opening }) => opening !== undefined && (opening.toMs === undefined || (period.toMs !== undefined && opening.toMs >= period.toMs)),
  );
  const openDelays = keptOpen.map(({ downSince, opening }) => opening!.fromMs - downSince);
  const closeDelays = keptOpen.flatMap(({ period, opening }) => (period.toMs === undefined || opening!.toMs === undefined ? [] : [opening!.toMs - period.toMs]));
  return {
    figures: {
      seen: seen.length,
      opened: keptOpen.length,
      falseOpens,
      maxOpenDelayS: seconds(Math.max(0, ...openDelays)),
      maxCloseDelayS: seconds(Math.max(0, ...closeDelays)),
      warnings: record.warnings,
      recoveries: record.recoveries,
    },
    outages: outages.map(({ period, opening }) => ({ period, opening })),
  };
}
