/**
 * What the demo is made of: the simulated account and doorbells, the bridge, and the plugin's
 * platform block pointing at the simulator.
 */
import { randomInt } from 'node:crypto';
import type { Simulator } from '../../simulator/index.js';
import type { Relay } from '../../simulator/relay/types.js';
import { loopbackPlatformBlock } from './platform-block.js';
import type { DemoDoorbell } from './demo-folder.js';

export const DEMO_EMAIL = 'demo@example.com';

export const DEMO_DOORBELLS: readonly DemoDoorbell[] = [
  { deviceId: '1234567', name: 'Front Door' },
  { deviceId: '7654321', name: 'Back Door' },
];

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
    doorbells: DEMO_DOORBELLS,
    motionTimeout: MOTION_TIMEOUT_SECONDS,
  });
}
