/**
 * What HomeKit sees of alerts stopping over the week: when each doorbell was down (its StatusFault),
 * and when the Doorbell Alerts sensor opened and closed, read from the characteristics' own change
 * events, with the plugin's warning and recovery lines counted as they are logged.
 */
import type { Characteristic } from 'homebridge';
import { ALERTS_OPEN_AFTER_MS } from '../../src/alerts/alerts-rule.js';
import { hap } from '../lib/hap.js';
import type { LogLine } from './plugin-log.js';

const WARNING_PREFIX = 'Doorbell alerts stopped:';
const RECOVERY_PREFIX = 'Doorbell alerts are flowing again after';

/** From when to when; `toMs` undefined while it lasts. */
export interface Span {
  fromMs: number;
  toMs: number | undefined;
}

export interface SensorRecord {
  /** Per configured doorbell, the spans its StatusFault was GENERAL_FAULT. */
  faults: Span[][];
  /** The spans the sensor was open. */
  open: Span[];
  warnings: number;
  recoveries: number;
}

const { Characteristic: C } = hap;

export class AlertsSensorWatch {
  private readonly faults: Span[][] = [];
  private readonly open: Span[] = [];
  private warnings = 0;
  private recoveries = 0;
  /** Removes the listeners of the characteristics followed now. */
  private detachers: Array<() => void> = [];

  constructor(private readonly now: () => number) {}

  /**
   * Call right after each launch, with each configured doorbell's StatusFault, in order, and the
   * sensor's ContactSensorState: they are published by then. A launch after a restart has new ones:
   * the spans go on from where the last run left them.
   */
  attach(faults: readonly Characteristic[], state: Characteristic): void {
    this.detach();
    faults.forEach((fault, index) => {
      this.faults[index] ??= [];
      this.follow(fault, C.StatusFault.GENERAL_FAULT, this.faults[index]);
    });
    this.follow(state, C.ContactSensorState.CONTACT_NOT_DETECTED, this.open);
  }

  /** The run followed is over: its characteristics tell nothing more. */
  detach(): void {
    this.detachers.forEach((detach) => detach());
    this.detachers = [];
  }

  /** Hand every log line here. */
  onLogLine({ level, message }: LogLine): void {
    if (level === 'warn' && message.startsWith(WARNING_PREFIX)) {
      this.warnings += 1;
    } else if (level === 'info' && message.startsWith(RECOVERY_PREFIX)) {
      this.recoveries += 1;
    }
  }

  /** What was seen so far. */
  record(): SensorRecord {
    const copy = (spans: Span[]): Span[] => spans.map((span) => ({ ...span }));
    return { faults: this.faults.map(copy), open: copy(this.open), warnings: this.warnings, recoveries: this.recoveries };
  }

  /** Records the spans during which the characteristic holds `value`, from its value now on. */
  private follow(characteristic: Characteristic, value: number, spans: Span[]): void {
    const update = (current: unknown): void => {
      const last = spans.at(-1);
      const holding = last !== undefined && last.toMs === undefined;
      if (current === value && !holding) {
        spans.push({ fromMs: this.now(), toMs: undefined });
      } else if (current !== value && holding) {
        last.toMs = this.now();
      }
    };
    update(characteristic.value);
    const listener = ({ newValue }: { newValue: unknown }): void => update(newValue);
    characteristic.on('change', listener);
    this.detachers.push(() => characteristic.off('change', listener));
  }
}

/** The spans during which some doorbell was down: the faults of all doorbells merged. */
export function downPeriods(faults: readonly Span[][]): Span[] {
  const spans = faults.flat().sort((a, b) => a.fromMs - b.fromMs);
  const merged: Span[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last !== undefined && (last.toMs === undefined || span.fromMs <= last.toMs)) {
      last.toMs = last.toMs === undefined || span.toMs === undefined ? undefined : Math.max(last.toMs, span.toMs);
    } else {
      merged.push({ ...span });
    }
  }
  return merged;
}

/**
 * When, within `period`, some doorbell had first been down for a minute without a break; undefined
 * when none was (a fault still lasting counts until `endMs`).
 */
export function firstMinuteDown(faults: readonly Span[][], period: Span, endMs: number): number | undefined {
  const inPeriod = faults.flat().filter(({ fromMs }) => fromMs >= period.fromMs && (period.toMs === undefined || fromMs <= period.toMs));
  const opens = inPeriod.filter(({ fromMs, toMs }) => (toMs ?? endMs) - fromMs >= ALERTS_OPEN_AFTER_MS).map(({ fromMs }) => fromMs + ALERTS_OPEN_AFTER_MS);
  return opens.length === 0 ? undefined : Math.min(...opens);
}
