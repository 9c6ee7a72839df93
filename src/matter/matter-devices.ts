import type { API, MatterAccessory, MatterAPI } from 'homebridge';
import { ALERTS_SENSOR_NAME } from '../alerts/alerts-sensor.js';
import { cleanName } from '../accessories/names.js';
import { DETECTION_SUFFIXES, DETECTIONS, type Detection } from '../values/detection.js';

/**
 * A bridged device's node label holds at most 32 bytes of UTF-8 (matter.js refuses more than 32 code
 * units, which a label within 32 bytes never has). Names are cleaned as HomeKit's are, the doorbell's
 * part cut so that the device's suffix survives.
 */
const MATTER_NAME_BYTES = 32;

/**
 * The Matter devices a doorbell has: `motion`, an occupancy sensor, always; `button`, a generic
 * switch, while its button is on; an occupancy sensor per configured detection (`person`, `vehicle`,
 * `package`, `animal`, `other`). Each is a bridged device of its own, since a composed device's parts
 * carry no name of their own on Homebridge 2.1.0. And the bridge's one `alerts` device, the Doorbell
 * Alerts contact sensor, which belongs to no doorbell.
 */
export type MatterRole = 'motion' | 'button' | 'alerts' | Detection;

const ROLES: readonly string[] = ['motion', 'button', 'alerts', ...DETECTIONS];

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

/** The Doorbell Alerts sensor's context: its id, as its serial number, and its name stand for a doorbell's. */
export const ALERTS_CONTEXT: Readonly<MatterContext> = { deviceId: 'alerts', role: 'alerts', doorbellName: ALERTS_SENSOR_NAME };

/** What follows the doorbell's name: the detections' sensors are named as the HomeKit accessory's are. */
function suffixOf(role: MatterRole): string {
  switch (role) {
    case 'motion':
    case 'alerts':
      return '';
    case 'button':
      return ' Doorbell';
    default:
      return ` ${DETECTION_SUFFIXES[role]}`;
  }
}

/** A momentary switch rests at position 0 and is pressed at position 1. */
const SWITCH_POSITIONS = 2;

/** `OccupancySensing.OccupancySensorType.Pir`: a passive infrared sensor, as a doorbell's motion detection is. */
const PIR = 0;

/** Derived from the device id and the role alone, so a renamed doorbell's devices keep their UUIDs. */
function matterUuid(api: API, deviceId: string, role: MatterRole): string {
  return api.hap.uuid.generate(role === 'motion' || role === 'alerts' ? `doorbell-motion:matter:${deviceId}` : `doorbell-motion:matter:${deviceId}:${role}`);
}

/** A battery at this many percent or less is low: the same line as HomeKit's. */
const LOW_BATTERY_PERCENT = 20;

/**
 * The doorbell's battery as Homebridge's power source cluster: Matter counts half percents, and names a
 * low battery a warning. It is part of the device's definition, so it is given at registration only;
 * Homebridge 2.4.0 composes it, and an earlier one would drop it without a word, so it is given only there.
 */
function powerSourceOf(api: API, batteryPercent: number | undefined): MatterAccessory['clusters'] {
  if (batteryPercent === undefined || !api.versionGreaterOrEqual('2.4.0')) {
    return {};
  }
  const level = Math.min(100, Math.max(0, Math.round(batteryPercent)));
  // status 1: active; batChargeLevel 0: ok, 1: warning.
  return { powerSource: { status: 1, order: 0, description: 'Battery', batPercentRemaining: level * 2, batChargeLevel: level <= LOW_BATTERY_PERCENT ? 1 : 0 } };
}

/**
 * The device's definition, in its resting state: no occupancy, the button released, the contact closed.
 * `batteryPercent`: the doorbell's battery level as the last run left it, for its `motion` device.
 */
export function matterAccessory(api: API, matter: MatterAPI, context: MatterContext, batteryPercent?: number): MatterAccessory {
  const { deviceId, role, doorbellName } = context;
  return {
    UUID: matterUuid(api, deviceId, role),
    displayName: cleanName(doorbellName, deviceId, suffixOf(role), MATTER_NAME_BYTES, 'utf8'),
    deviceType: deviceTypeOf(matter, role),
    serialNumber: deviceId,
    manufacturer: 'Doorbell Motion',
    model: role === 'alerts' ? 'Alerts' : 'Doorbell',
    context: { ...context },
    clusters: { ...restingState(role), ...(role === 'motion' ? powerSourceOf(api, batteryPercent) : {}) },
  };
}

function restingState(role: MatterRole): MatterAccessory['clusters'] {
  switch (serverClusterOf(role)) {
    case 'switch':
      return { switch: { numberOfPositions: SWITCH_POSITIONS, currentPosition: 0 } };
    case 'booleanState':
      return { booleanState: { stateValue: true } };
    case 'occupancySensing':
      return { occupancySensing: { occupancy: { occupied: false }, occupancySensorType: PIR, occupancySensorTypeBitmap: { pir: true } } };
  }
}

/** The role a cached accessory was published in; undefined for one the plugin does not know. */
export function cachedContext(accessory: MatterAccessory): MatterContext | undefined {
  const { deviceId, role, doorbellName } = accessory.context as Partial<MatterContext>;
  const known = typeof deviceId === 'string' && typeof doorbellName === 'string' && typeof role === 'string' && ROLES.includes(role);
  return known ? { deviceId, role, doorbellName } : undefined;
}

/** A doorbell's button: momentary, its release reported; no long or multiple presses, which a controller would wait for. */
const BUTTON_FEATURES = ['MomentarySwitch', 'MomentarySwitchRelease'] as const;
/** A doorbell's motion detection senses as a passive infrared sensor does. */
const SENSOR_FEATURES = ['PassiveInfrared'] as const;

/**
 * Each role's server cluster's features; none to compare for the contact sensor, taken as Homebridge's
 * type has it (Homebridge 2.4's with the ChangeEvent feature, 2.1.0's without).
 */
const FEATURES: Readonly<Record<ReturnType<typeof serverClusterOf>, readonly string[] | undefined>> = {
  switch: BUTTON_FEATURES,
  occupancySensing: SENSOR_FEATURES,
  booleanState: undefined,
};

/**
 * The device types, with their server cluster and exactly its features. Homebridge 2.1.0's
 * `MotionSensor` and `GenericSwitch` come without their server cluster, and 2.4.0's with more
 * features than a doorbell has (a switch with long and multiple presses, a sensor with an occupancy
 * event): both are composed from the requirements the device type itself offers, never from a second
 * copy of matter.js.
 *
 * Each also has the bridged-device information Homebridge gives every bridged device (taken from its
 * `BridgedNode` type, and kept as it is when present). Homebridge 2.4 rebuilds a cached device from the
 * base device type of its name before the plugin registers it, and keeps that device, the base type's
 * features with it, when the registration has the same behaviours; with this one more, the types
 * differ, so Homebridge builds the device anew from the plugin's type, under the same UUID (and so
 * the same endpoint number).
 */
function deviceTypeOf(matter: MatterAPI, role: MatterRole): MatterAccessory['deviceType'] {
  const bridged = matter.deviceTypes.BridgedNode.behaviors.bridgedDeviceBasicInformation;
  if (role === 'button') {
    const button = matter.deviceTypes.GenericSwitch;
    return button.with(button.requirements.server.mandatory.Switch.with(...BUTTON_FEATURES), bridged);
  }
  if (role === 'alerts') {
    // Unlike the others, the contact sensor's type comes with its server cluster (BooleanState has no
    // features to choose) on 2.1.0 too, and Homebridge adds the bridged-device information itself.
    // Taken as it is, it has the shape Homebridge 2.4 restores a cached one in, so that one is kept
    // rather than built anew while the plugin already updates it.
    return matter.deviceTypes.ContactSensor;
  }
  const sensor = matter.deviceTypes.MotionSensor;
  return sensor.with(sensor.requirements.server.mandatory.OccupancySensing.with(...SENSOR_FEATURES), bridged);
}

/** The device's server cluster, as Homebridge names it in `getAccessoryState`. */
export function serverClusterOf(role: MatterRole): 'switch' | 'occupancySensing' | 'booleanState' {
  return role === 'button' ? 'switch' : role === 'alerts' ? 'booleanState' : 'occupancySensing';
}

/**
 * Whether a device's server cluster, as Homebridge reads it back (its `featureMap` of named flags,
 * `momentarySwitch: true`), has other features than the plugin composes for the role: then it is not
 * the plugin's device (yet), but one Homebridge 2.4 rebuilt from its cache. False when the state
 * tells nothing of features.
 */
export function hasOtherFeatures(role: MatterRole, state: Record<string, unknown> | undefined): boolean {
  const featureMap = state?.featureMap;
  const features = FEATURES[serverClusterOf(role)];
  if (typeof featureMap !== 'object' || featureMap === null || features === undefined) {
    return false;
  }
  const wanted = new Set<string>(features.map((feature) => feature[0].toLowerCase() + feature.slice(1)));
  return Object.entries(featureMap).some(([feature, on]) => (on === true) !== wanted.has(feature));
}
