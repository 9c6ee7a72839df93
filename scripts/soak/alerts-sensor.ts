/**
 * What HomeKit sees of alerts stopping over the week: when each doorbell was down (its StatusFault),
 * and when the Doorbell Alerts sensor opened and closed, read from the characteristics' own change
 * events, with the plugin's warning and recovery lines counted as they are logged.
 */
import type { Characteristic, PlatformAccessory } from 'homebridge';
import { accessoryUuid } from '../../src/accessories/doorbell-accessory.js';
import { hap } from '../../test/support/hap.js';
import type { TestApi } from '../../test/support/homebridge-api.js';
import type { LogLine } from './plugin-log.js';

/** The accessory's UUID is derived from this, as the platform derives it. */
const ALERTS_UUID_NAME = 'doorbell-motion:alerts';

/** A doorbell down this long without a break opens the sensor. */
export const OPEN_AFTER_MS = 60_000;

export const WARNING_PREFIX = 'Doorbell alerts stopped:';
export const RECOVERY_PREFIX = 'Doorbell alerts are flowing again after';

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

const { Characteristic: C, Service: S } = hap;

export class AlertsSensorWatch {
  private readonly faults: Span[][];
  private readonly open: Span[] = [];
  private warnings = 0;
  private recoveries = 0;

  constructor(
    private readonly test: TestApi,
    private readonly deviceIds: readonly string[],
    private readonly now: () => number,
  ) {
    this.faults = deviceIds.map(() => []);
  }

  /** Call right after the launch: the doorbells (and the sensor) are published by then. */
  attach(): void {
    this.deviceIds.forEach((deviceId, index) => {
      const fault = this.characteristic(accessoryUuid(this.test.api, deviceId), S.MotionSensor, C.StatusFault);
      this.follow(fault, C.StatusFault.GENERAL_FAULT, this.faults[index]);
    });
    const state = this.characteristic(hap.uuid.generate(ALERTS_UUID_NAME), S.ContactSensor, C.ContactSensorState);
    this.follow(state, C.ContactSensorState.CONTACT_NOT_DETECTED, this.open);
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
    characteristic.on('change', ({ newValue }) => update(newValue));
  }

  private characteristic(uuid: string, service: typeof S.MotionSensor | typeof S.ContactSensor, type: typeof C.StatusFault | typeof C.ContactSensorState): Characteristic {
    const accessory: PlatformAccessory | undefined = this.test.registered.get(uuid);
    const found = accessory?.getService(service)?.getCharacteristic(type);
    if (found === undefined) {
      throw new Error(`the platform published no ${service.name} for ${uuid}`);
    }
    return found;
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
  const opens = inPeriod.filter(({ fromMs, toMs }) => (toMs ?? endMs) - fromMs >= OPEN_AFTER_MS).map(({ fromMs }) => fromMs + OPEN_AFTER_MS);
  return opens.length === 0 ? undefined : Math.min(...opens);
}
