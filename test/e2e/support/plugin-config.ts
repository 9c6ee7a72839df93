/**
 * The DoorbellMotion platform block the e2e scenarios write into config.json, and the simulated
 * account and doorbells it matches.
 */
import type { SimulatorOptions } from '../../../simulator/index.js';
import { loopbackPlatformBlock, type LoopbackEndpoints } from '../../../scripts/lib/platform-block.js';

export const PLATFORM = 'DoorbellMotion';

/** The platform's `name`: Homebridge prefixes every plugin log line with it. */
export const PLATFORM_LOG_NAME = 'Doorbell Motion';

/** A `+` must reach the region call as %2B, where a careless encoder sends a space. */
export const ACCOUNT = { email: 'e2e+motion@example.com', country: 'US', countryCode: '1', code: '012345' } as const;

/**
 * A line the plugin logged: Homebridge prefixes each with the platform block's `name`, or with the
 * platform itself when the block has none.
 */
export function pluginLogLine(pattern: string, logName: string = PLATFORM_LOG_NAME): RegExp {
  return new RegExp(`\\[${logName}\\] .*${pattern}`, 'i');
}

/** The minimum: scenarios wait this long for motion to fall back. */
export const MOTION_TIMEOUT_S = 5;

/**
 * One id per way an id can go wrong: an ordinary string, a JSON integer (which Homebridge hands over
 * as a number), and one above 2^53 that a JS number would turn into ...992.
 */
export const DOORBELLS = [
  { deviceId: '1234567', name: 'Front Door' },
  { deviceId: 42, name: 'Back Door' },
  { deviceId: '9007199254740993', name: 'Garage' },
] as const;

/** Each doorbell's HomeKit serial number: its device id as a decimal string. */
export const SERIAL_NUMBERS = DOORBELLS.map(({ deviceId }) => String(deviceId));

/** Where the plugin sends its requests and receives its notifications. */
export type PluginEndpoints = LoopbackEndpoints & { pushPort: number };

/** The full block for the simulator. */
export function doorbellMotionPlatform(endpoints: PluginEndpoints, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return loopbackPlatformBlock(endpoints, { name: PLATFORM_LOG_NAME, account: ACCOUNT, doorbells: DOORBELLS, motionTimeout: MOTION_TIMEOUT_S }, overrides);
}

/**
 * A doorbell of the account that the standard block leaves out, for the settings page to add: a
 * camera whose id is above 2^53 (a JS number would make it ...996).
 */
export const SIDE_GATE = { deviceId: '9007199254740995', name: 'Side Gate' } as const;

/**
 * A simulator that knows exactly this account and these doorbells, any other id a 404; its device
 * list has them all, shared and camera ones among them, and a chime that is not a doorbell.
 */
export const SIMULATOR_OPTIONS: SimulatorOptions = {
  accounts: [{ email: ACCOUNT.email, code: ACCOUNT.code, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode }],
  doorbells: [...SERIAL_NUMBERS, SIDE_GATE.deviceId],
  devices: [
    { list: 'doorbots', id: '1234567', description: 'Front Door', kind: 'lpd_v2' },
    { list: 'authorized_doorbots', id: '42', description: 'Back Door', kind: 'doorbell_v3' },
    { list: 'doorbots', id: '9007199254740993', description: 'Garage', kind: 'lpd_v2' },
    { list: 'stickup_cams', id: SIDE_GATE.deviceId, description: SIDE_GATE.name, kind: 'stickup_cam_v4' },
    { list: 'chimes', id: '5550001', description: 'Hallway Chime', kind: 'chime_pro' },
  ],
};
