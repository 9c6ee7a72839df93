/**
 * What the demo is made of: the simulated account and doorbells, the bridge, and the plugin's
 * platform block pointing at the simulator.
 */
import { randomInt } from 'node:crypto';
import type { SimulatedAccountSetup, SimulatedDevice, Simulator } from '../../simulator/index.js';
import type { Relay } from '../../simulator/relay/index.js';
import { loopbackPlatformBlock } from './platform-block.js';
import type { DemoDoorbell } from './demo-folder.js';

export const DEMO_EMAIL = 'demo@example.com';

/** `npm start -- --accounts N` takes from 1 to this many accounts, as the plugin serves at most 20. */
export const MAX_DEMO_ACCOUNTS = 20;

/** One account of the demo: its label in the platform block, its sign-in and its doorbells. */
export interface DemoAccount {
  label: string;
  email: string;
  code: string;
  doorbells: readonly DemoDoorbell[];
}

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
 * The demo's accounts: the demo account with the two demo doorbells, then, as the simulator's
 * `--accounts` numbers them, account k as user<k>@example.com with its doorbell k000001. Each gets a
 * new one-time code every run (the plugin never sends a spent code again).
 */
export function demoAccounts(count: number): DemoAccount[] {
  return Array.from({ length: count }, (_, index) => {
    const k = index + 1;
    const label = `Account ${k}`;
    if (k === 1) {
      return { label, email: DEMO_EMAIL, code: newVerificationCode(), doorbells: DEMO_DOORBELLS };
    }
    return { label, email: `user${k}@example.com`, code: newVerificationCode(), doorbells: [{ deviceId: String(k * 1_000_000 + 1), name: `User ${k} Door` }] };
  });
}

/**
 * The simulator's accounts for the demo's: the first holds the simulator's doorbells and device list
 * (demoDevices), each other one its own doorbell, listed under the demo's name for it.
 */
export function simulatedDemoAccounts(accounts: readonly DemoAccount[]): SimulatedAccountSetup[] {
  return accounts.map(({ email, code, doorbells }, index) =>
    index === 0
      ? { email, code }
      : { email, code, doorbells: doorbells.map(({ deviceId }) => deviceId), devices: doorbells.map(({ deviceId, name }) => ({ list: 'doorbots', id: deviceId, description: name, kind: 'lpd_v2' })) },
  );
}

/**
 * The DoorbellMotion block of config.json, in relay mode (the default a user gets) through the
 * loopback relay, which stands in for ntfy.sh. One account at the top of the block, as a user's
 * first set-up has it; several as entries of `accounts`, each labelled.
 */
export function demoPlatform(simulator: Simulator, relay: Relay, accounts: readonly DemoAccount[]): Record<string, unknown> {
  const endpoints = { accountUrl: simulator.accountUrl, doorbellUrl: simulator.doorbellUrl, relayUrl: relay.url };
  const [first] = accounts;
  const block = loopbackPlatformBlock(endpoints, {
    name: 'Doorbell Motion',
    account: { email: first.email, code: first.code },
    doorbells: first.doorbells.map((doorbell, index) => (index === 0 ? { ...doorbell, ...DEMO_CONTROLS } : doorbell)),
    motionTimeout: MOTION_TIMEOUT_SECONDS,
  });
  if (accounts.length === 1) {
    return block;
  }
  const { platform, name, motionTimeout, push, account, doorbellServerUrl, doorbells } = block;
  const entries = accounts.map(({ label, email, code, doorbells: own }, index) => ({
    label,
    account: { ...(account as Record<string, unknown>), email, code },
    doorbellServerUrl,
    doorbells: index === 0 ? doorbells : own,
  }));
  return { platform, name, motionTimeout, push, accounts: entries };
}
