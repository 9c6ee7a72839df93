import { isDeviceIdText } from './field-checks.js';
import type { DeviceHealth, DeviceListName, SimulatedDevice } from './types.js';

/**
 * The account's device list as the doorbell service answers `GET /clients_api/ring_devices`: one
 * array per kind of device, every entry with more keys than a client reads, ids as JSON integers.
 */

/** In the order the service writes them. */
const LISTS: readonly DeviceListName[] = ['doorbots', 'authorized_doorbots', 'stickup_cams', 'chimes'];

/**
 * One entry of every kind a client meets: the account's own doorbell, one shared with it, a camera
 * whose id is above 2^53 (a JS number would make it ...992), a chime (not a doorbell), and entries a
 * client must skip among the good ones: an id that is not a number, one past the int64 range, none.
 * Their health reads every way the service writes it: a battery as a number, as a decimal string,
 * and null (wired); a doorbell the service cannot reach.
 */
export const SAMPLE_DEVICES: readonly SimulatedDevice[] = [
  { list: 'doorbots', id: '1234567', description: 'Front Door', kind: 'lpd_v2', battery_life: 15 },
  { list: 'doorbots', rawEntry: '{"id":"front-gate","description":"Front Gate","kind":"lpd_v2"}' },
  { list: 'doorbots', rawEntry: '{"id":9223372036854775808,"description":"Out of range","kind":"lpd_v2"}' },
  { list: 'authorized_doorbots', id: '7654321', description: "Neighbour's Door", kind: 'doorbell_v3', battery_life: '87.6', connection: 'offline' },
  { list: 'authorized_doorbots', rawEntry: '{"description":"No id"}' },
  { list: 'stickup_cams', id: '9007199254740993', description: 'Garage', kind: 'stickup_cam_v4', battery_life: null },
  { list: 'chimes', id: '5550001', description: 'Hallway Chime', kind: 'chime_pro' },
];

/** Refuses a device list that could not be what its author meant, so a test cannot pass by accident. */
export function checkDevices(devices: readonly SimulatedDevice[]): void {
  for (const device of devices) {
    if (!LISTS.includes(device.list)) {
      throw new TypeError(`simulated device list ${JSON.stringify(device.list)} must be one of ${LISTS.join(', ')}`);
    }
    if ('rawEntry' in device) {
      try {
        JSON.parse(device.rawEntry);
      } catch {
        throw new TypeError(`simulated device rawEntry ${JSON.stringify(device.rawEntry)} must be JSON text`);
      }
    } else if (!isDeviceIdText(device.id)) {
      throw new TypeError(`simulated device id ${JSON.stringify(device.id)} must be a decimal from 1 to 9223372036854775807`);
    }
  }
}

/** The device list holds no doorbell with this id. */
export class DeviceNotListed extends Error {
  constructor(readonly deviceId: string) {
    super(`the device list holds no doorbell ${deviceId}`);
  }
}

/**
 * Changes what the list says of doorbell `id`'s health (a key given as undefined is left as it was);
 * false when the list has no such doorbell.
 */
export function setDeviceHealth(devices: SimulatedDevice[], id: string, health: DeviceHealth): boolean {
  const index = devices.findIndex((device) => 'id' in device && device.id === id);
  const device = devices[index];
  if (device === undefined || !('id' in device)) {
    return false;
  }
  const changed: SimulatedDevice = { ...device };
  if (health.battery_life !== undefined) {
    changed.battery_life = health.battery_life;
  }
  if (health.connection !== undefined) {
    changed.connection = health.connection;
  }
  devices[index] = changed;
  return true;
}

/** Each of `doorbells` as one of the account's own doorbells. */
export function devicesOf(doorbells: readonly string[]): SimulatedDevice[] {
  return doorbells.map((id) => ({ list: 'doorbots', id, description: `Doorbell ${id}`, kind: 'lpd_v2' }));
}

/** The answer's JSON text, written by hand so that every id keeps its digits. */
export function deviceListBody(devices: readonly SimulatedDevice[]): string {
  const lists = LISTS.map((list) => `${JSON.stringify(list)}:[${devices.filter((device) => device.list === list).map(entryText).join(',')}]`);
  // A list no client knows, as a service adds them over time: nothing in it is a doorbell.
  return `{${[...lists, '"base_stations":[{"id":3141592,"description":"Alarm Base"}]'].join(',')}}`;
}

function entryText(device: SimulatedDevice): string {
  if ('rawEntry' in device) {
    return device.rawEntry;
  }
  const fields = [
    `"id":${device.id}`,
    ...(device.description === undefined ? [] : [`"description":${JSON.stringify(device.description)}`]),
    ...(device.kind === undefined ? [] : [`"kind":${JSON.stringify(device.kind)}`]),
    // Keys a client does not read, nested ones included.
    `"device_id":${JSON.stringify(`dev-${device.id}`)}`,
    ...(device.battery_life === undefined ? [] : [`"battery_life":${JSON.stringify(device.battery_life)}`]),
    `"alerts":{"connection":${JSON.stringify(device.connection ?? 'online')},"battery":"ok"}`,
    '"features":{"motions_enabled":true}',
  ];
  return `{${fields.join(',')}}`;
}
