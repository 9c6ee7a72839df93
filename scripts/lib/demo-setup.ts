/**
 * What the demo is made of: the simulated account and doorbells, the bridge, and the plugin's
 * platform block pointing at the simulator.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { Simulator } from '../../simulator/index.js';
import { PLATFORM_NAME } from '../../src/settings.js';
import type { BridgeIdentity, DemoDoorbell } from './demo-folder.js';

export const DEMO_EMAIL = 'demo@example.com';

export const DEMO_DOORBELLS: readonly DemoDoorbell[] = [
  { deviceId: '1234567', name: 'Front Door' },
  { deviceId: '7654321', name: 'Back Door' },
];

export const BRIDGE_NAME = 'Doorbell Motion Demo';

/** Short, so a demo motion visibly ends while you watch the Home app. */
const MOTION_TIMEOUT_SECONDS = 10;

const LOOPBACK = '127.0.0.1';

/**
 * A new one-time verification code for this run's account. The plugin never sends a code twice
 * (it remembers spent ones across restarts), so a fixed code would work on the first run only.
 */
export function newVerificationCode(): string {
  return String(randomInt(1_000_000)).padStart(6, '0');
}

/**
 * A bridge identity for a new demo folder. Random rather than fixed, since the bridge is pairable on
 * the local network: two demos there must not share a HAP identity, nor everyone one setup code.
 */
export function newBridgeIdentity(): BridgeIdentity {
  const octets = randomBytes(6);
  // A locally administered unicast address: it can never be a real device's MAC.
  octets[0] = (octets[0] & 0xfc) | 0x02;
  const username = [...octets].map((octet) => octet.toString(16).padStart(2, '0').toUpperCase()).join(':');
  const digits = String(randomInt(100_000_000)).padStart(8, '0');
  return { username, pin: `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}` };
}

/**
 * The DoorbellMotion block of config.json. The push receiver stays on loopback in every mode: the
 * only sender is the simulator on this machine.
 */
export function demoPlatform(simulator: Simulator, code: string, pushPort: number): Record<string, unknown> {
  return {
    platform: PLATFORM_NAME,
    name: 'Doorbell Motion',
    account: { serverUrl: simulator.accountUrl, email: DEMO_EMAIL, country: 'US', countryCode: '1', code },
    doorbellServerUrl: simulator.doorbellUrl,
    doorbells: DEMO_DOORBELLS,
    motionTimeout: MOTION_TIMEOUT_SECONDS,
    push: { host: LOOPBACK, port: pushPort, publicUrl: `http://${LOOPBACK}:${pushPort}` },
  };
}
