/**
 * What the demo is made of: the simulated account and doorbells, the bridge, and the plugin's
 * platform block pointing at the simulator.
 */
import { randomInt } from 'node:crypto';
import type { SimulatedDevice, Simulator } from '../../simulator/index.js';
import type { Relay } from '../../simulator/relay/index.js';
import { loopbackPlatformBlock } from './platform-block.js';
import type { DemoDoorbell } from './demo-folder.js';

export const DEMO_EMAIL = 'demo@example.com';

export const DEMO_DOORBELLS: readonly DemoDoorbell[] = [
  { deviceId: '1234567', name: 'Front Door' },
  { deviceId: '7654321', name: 'Back Door' },
];

/** The first demo doorbell runs on a battery, so the Home app shows its level; the second is wired. */
const DEMO_BATTERY_PERCENT = 85;

/** The simulated account's device list: the demo doorbells, the first with its battery. */
export function demoDevices(): SimulatedDevice[] {
  return DEMO_DOORBELLS.map(({ deviceId, name }, index) => ({
    list: 'doorbots',
    id: deviceId,
    description: name,
    kind: 'lpd_v2',
    ...(index === 0 ? { battery_life: DEMO_BATTERY_PERCENT } : {}),
  }));
}

/** The first demo doorbell carries every control, so each can be tried from the Home app; the second shows the defaults. */
const DEMO_CONTROLS = { motionSwitch: true, chimeSwitch: true, detections: ['person', 'vehicle', 'package', 'animal', 'other'] };

/** The banner's word on the controls, under the line on how to trigger motion. */
export function demoControlsNote([first]: readonly DemoDoorbell[]): string[] {
  return [
    '  Add --detection person (or vehicle, package, animal, other) for what the motion saw. In the Home app,',
    `  ${first.name} has Motion Alerts and Chime switches and Person, Vehicle, Package, Animal and Other Motion`,
    '  sensors to try them with.',
    `  ${first.name} also shows its battery; the simulator's control API (see CONTRIBUTING.md) makes it low or offline.`,
  ];
}

export const BRIDGE_NAME = 'Doorbell Motion Demo';

/** Short, so a demo motion visibly ends while you watch the Home app. */
const MOTION_TIMEOUT_SECONDS = 10;

/**
 * A new one-time verification code for this run's account. The plugin never sends a code twice
 * (it remembers spent ones across restarts), so a fixed code would work on the first run only.
 */
export function newVerificationCode(): string {
  return String(randomInt(1_000_000)).padStart(6, '0');
}

/**
 * The DoorbellMotion block of config.json, in relay mode (the default a user gets) through the
 * loopback relay, which stands in for ntfy.sh.
 */
export function demoPlatform(simulator: Simulator, relay: Relay, code: string): Record<string, unknown> {
  const endpoints = { accountUrl: simulator.accountUrl, doorbellUrl: simulator.doorbellUrl, relayUrl: relay.url };
  return loopbackPlatformBlock(endpoints, {
    name: 'Doorbell Motion',
    account: { email: DEMO_EMAIL, code },
    doorbells: DEMO_DOORBELLS.map((doorbell, index) => (index === 0 ? { ...doorbell, ...DEMO_CONTROLS } : doorbell)),
    motionTimeout: MOTION_TIMEOUT_SECONDS,
  });
}
