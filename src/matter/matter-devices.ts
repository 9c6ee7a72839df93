import type { API, MatterAccessory, MatterAPI } from 'homebridge';
import { cleanName } from '../accessories/names.js';
import { DETECTIONS, type Detection } from '../values/detection.js';

/**
 * A bridged device's node label holds at most 32 characters; matter.js refuses a longer one. Names are
 * cleaned as HomeKit's are, the doorbell's part cut so that the device's suffix survives.
 */
const MATTER_NAME_LENGTH = 32;

/**
 * The Matter devices a doorbell has: `motion`, an occupancy sensor, always; `button`, a generic
 * switch, while its button is on; an occupancy sensor per configured detection (`person`, `vehicle`,
 * `other`). Each is a bridged device of its own, since a composed device's parts carry no name of
 * their own on Homebridge 2.1.0.
 */
export type MatterRole = 'motion' | 'button' | Detection;

const ROLES: readonly string[] = ['motion', 'button', ...DETECTIONS];

/**
 * Everything a device's definition is made from, kept in its context so that a cached device can be
 * registered again without a config: the doorbell's id and name, and the device's role.
 */
export interface MatterContext {
  deviceId: string;
  role: MatterRole;
  /** The doorbell's name, from the config, or as the cache last had it. */
  doorbellName: string;
}

/** As in HomeKit: the detections' sensors are named as the HomeKit accessory's are. */
const SUFFIXES: Readonly<Record<MatterRole, string>> = { motion: '', button: ' Doorbell', person: ' Person', vehicle: ' Vehicle', other: ' Other Motion' };

/** A momentary switch rests at position 0 and is pressed at position 1. */
const SWITCH_POSITIONS = 2;

/** `OccupancySensing.OccupancySensorType.Pir`: a passive infrared sensor, as a doorbell's motion detection is. */
const PIR = 0;

/** Derived from the device id and the role alone, so a renamed doorbell's devices keep their UUIDs. */
export function matterUuid(api: API, deviceId: string, role: MatterRole): string {
  return api.hap.uuid.generate(role === 'motion' ? `doorbell-motion:matter:${deviceId}` : `doorbell-motion:matter:${deviceId}:${role}`);
}

/** The device's definition, in its resting state: no occupancy, the button released. */
export function matterAccessory(api: API, matter: MatterAPI, context: MatterContext): MatterAccessory {
  const { deviceId, role, doorbellName } = context;
  return {
    UUID: matterUuid(api, deviceId, role),
    displayName: cleanName(doorbellName, deviceId, SUFFIXES[role], MATTER_NAME_LENGTH),
    deviceType: deviceTypeOf(matter, role),
    serialNumber: deviceId,
    manufacturer: 'Doorbell Motion',
    model: 'Doorbell',
    context: { ...context },
    clusters:
      role === 'button'
        ? { switch: { numberOfPositions: SWITCH_POSITIONS, currentPosition: 0 } }
        : { occupancySensing: { occupancy: { occupied: false }, occupancySensorType: PIR, occupancySensorTypeBitmap: { pir: true } } },
  };
}

/** The role a cached accessory was published in; undefined for one the plugin does not know. */
export function cachedContext(accessory: MatterAccessory): MatterContext | undefined {
  const { deviceId, role, doorbellName } = accessory.context as Partial<MatterContext>;
  const known = typeof deviceId === 'string' && typeof doorbellName === 'string' && typeof role === 'string' && ROLES.includes(role);
  return known ? { deviceId, role, doorbellName } : undefined;
}

/**
 * The device types, with their server cluster and exactly its features. Homebridge 2.1.0's
 * `MotionSensor` and `GenericSwitch` come without their server cluster, and 2.4.0's with more
 * features than a doorbell has (long and multiple presses, which a controller would wait for): both
 * are composed from the requirements the device type itself offers, never from a second copy of
 * matter.js.
 */
function deviceTypeOf(matter: MatterAPI, role: MatterRole): MatterAccessory['deviceType'] {
  if (role === 'button') {
    const button = matter.deviceTypes.GenericSwitch;
    return button.with(button.requirements.server.mandatory.Switch.with('MomentarySwitch', 'MomentarySwitchRelease'));
  }
  const sensor = matter.deviceTypes.MotionSensor;
  return sensor.with(sensor.requirements.server.mandatory.OccupancySensing.with('PassiveInfrared'));
}
