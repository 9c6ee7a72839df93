/**
 * Every change HAP-NodeJS announces on a doorbell accessory's characteristics, which is what a
 * subscribed controller is sent: a test takes the changes one request caused and compares them.
 * HAP announces every update, even one to the same value, so a handler that touched a
 * characteristic it should have left alone shows up here too.
 */
import type { PlatformAccessory } from 'homebridge';
import { hap } from '../../scripts/lib/hap.js';
import { accessoryOf, type RunningPlatform } from '../../scripts/lib/platform-harness.js';

export interface HapChange {
  deviceId: string;
  /** `<service>.<characteristic>`, e.g. `MotionSensor.MotionDetected`. */
  characteristic: string;
  value: unknown;
}

const WATCHED = [
  ['MotionSensor', 'MotionDetected'],
  ['MotionSensor', 'StatusFault'],
  ['Doorbell', 'ProgrammableSwitchEvent'],
  ['StatelessProgrammableSwitch', 'ProgrammableSwitchEvent'],
] as const;

/** Records from now on, `take()` giving the changes since the previous call, oldest first; a service
 *  the accessory does not have (a doorbell button turned off) is skipped. */
export function recordHapChanges(platform: RunningPlatform, deviceIds: readonly string[]): { take(): HapChange[] } {
  const changes: HapChange[] = [];
  for (const deviceId of deviceIds) {
    const accessory = accessoryOf(platform, deviceId);
    for (const [service, characteristic] of WATCHED) {
      accessory
        .getService(hap.Service[service])
        ?.getCharacteristic(hap.Characteristic[characteristic])
        .on('change', ({ newValue }) => changes.push({ deviceId, characteristic: `${service}.${characteristic}`, value: newValue }));
    }
  }
  return { take: () => changes.splice(0) };
}

/** What a fresh notification of `kind` does to a configured doorbell, in the order the plugin fires it. */
export function changesOf(deviceId: string, kind: string, button: boolean): HapChange[] {
  if (kind === 'motion') {
    return [{ deviceId, characteristic: 'MotionSensor.MotionDetected', value: true }];
  }
  if (kind === 'ding' && button) {
    const SINGLE_PRESS = hap.Characteristic.ProgrammableSwitchEvent.SINGLE_PRESS;
    return ['Doorbell', 'StatelessProgrammableSwitch'].map((service) => ({ deviceId, characteristic: `${service}.ProgrammableSwitchEvent`, value: SINGLE_PRESS }));
  }
  return [];
}

/** The ProgrammableSwitchEvent values the Doorbell and the switch service of the button send from now on. */
export function recordPresses(accessory: PlatformAccessory): { doorbell: unknown[]; switch: unknown[] } {
  const record = (type: typeof hap.Service.Doorbell | typeof hap.Service.StatelessProgrammableSwitch) => {
    const presses: unknown[] = [];
    accessory.getService(type)?.getCharacteristic(hap.Characteristic.ProgrammableSwitchEvent).on('change', ({ newValue }) => presses.push(newValue));
    return presses;
  };
  return { doorbell: record(hap.Service.Doorbell), switch: record(hap.Service.StatelessProgrammableSwitch) };
}
