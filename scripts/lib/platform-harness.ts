import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { API, PlatformAccessory, PlatformConfig } from 'homebridge';
import type { Simulator } from '../../simulator/types.js';
import { accessoryUuid } from '../../src/accessories/doorbell-accessory.js';
import { parseConfig, type DoorbellSettings } from '../../src/config/parse-config.js';
import { DoorbellMotionPlatform } from '../../src/platform.js';
import type { PlatformTiming } from '../../src/platform.js';
import { hap } from './hap.js';
import { createTestApi, createTestLogger } from './homebridge-api.js';
import type { TestApi, TestLogger } from './homebridge-api.js';
import { loopbackPlatformBlock } from './platform-block.js';
import { pollUntil } from './poll.js';

export const ACCOUNT = { email: 'porch+light@example.com', code: '012345' };

/** The second id is above 2^53: it must survive config, subscription and notification exactly. */
export const DOORBELLS = [
  { deviceId: '1234567', name: 'Front Door' },
  { deviceId: '9007199254740993', name: 'Back Door' },
];

/** A doorbell's settings as the config check makes them of `entry`: whatever it does not set, at its default. */
export function doorbellSettings(entry: Record<string, unknown>): DoorbellSettings {
  const result = parseConfig({ name: 'Doorbell Motion', doorbellServerUrl: 'https://doorbell.invalid', doorbellAccessToken: 'token-1234', doorbells: [entry] });
  if (result.status !== 'ok' || result.problems.length > 0) {
    throw new Error(`not a doorbell entry: ${JSON.stringify(entry)}`);
  }
  return result.settings.doorbells[0];
}

/** Retries in milliseconds instead of minutes, so background recovery is observable in a test. */
export const FAST: PlatformTiming = {
  schedule: { retry: { firstMs: 40, factor: 2, maxMs: 160, jitter: true }, refreshMs: 60 * 60_000, listReadMs: 15 * 60_000 },
  relay: {
    aliveMs: 2_000,
    reconnect: { firstMs: 20, factor: 2, maxMs: 200, jitter: true },
    stableMs: 1_000,
    refusedRetryMs: 500,
    maxRetryAfterMs: 500,
    faultAfterMs: 300,
    staleMs: 120_000,
  },
  relayConnectWaitMs: 2_000,
  retry: { backoff: { firstMs: 1, factor: 2, maxMs: 4, jitter: true }, wait: async () => undefined },
};

export interface RunningPlatform {
  test: TestApi;
  log: TestLogger;
  platform: DoorbellMotionPlatform;
}

/**
 * A DoorbellMotion block for the simulator: direct mode with the receiver on loopback at `push`
 * when it is a port, relay mode through the loopback relay at `push` when it is its URL.
 */
export function platformConfig(sim: Simulator, push: number | string, overrides: Record<string, unknown> = {}): PlatformConfig {
  const delivery = typeof push === 'number' ? { pushPort: push } : { relayUrl: push };
  const endpoints = { accountUrl: sim.accountUrl, doorbellUrl: sim.doorbellUrl, ...delivery };
  const block = loopbackPlatformBlock(endpoints, { name: 'Doorbell Motion', account: ACCOUNT, doorbells: DOORBELLS, motionTimeout: 5 }, overrides);
  return block as PlatformConfig;
}

/** What Homebridge does at start-up: construct, hand over the cache, then signal the launch. */
export function launchPlatform(
  config: PlatformConfig,
  storagePath: string,
  cached: PlatformAccessory[] = [],
  timing: PlatformTiming = FAST,
  /** Changes Homebridge's API before the platform sees it: Matter on, say. */
  prepare?: (api: API) => void,
): RunningPlatform {
  const test = createTestApi({ storagePath, cachedAccessories: cached });
  prepare?.(test.api);
  const log = createTestLogger();
  const platform = new DoorbellMotionPlatform(log, config, test.api, timing);
  cached.forEach((accessory) => platform.configureAccessory(accessory));
  test.launch();
  return { test, log, platform };
}

/** A doorbell's accessory on the bridge; throws when it is not published. */
export function accessoryOf({ test }: Pick<RunningPlatform, 'test'>, deviceId: string): PlatformAccessory {
  const accessory = test.registered.get(accessoryUuid(test.api, deviceId));
  if (accessory === undefined) {
    throw new Error(`no accessory for ${deviceId}`);
  }
  return accessory;
}

/** The current value of a doorbell's MotionSensor characteristic, as HomeKit would read it. */
export function sensorValue(test: TestApi, deviceId: string, name: 'MotionDetected' | 'StatusFault'): unknown {
  const accessory = test.registered.get(accessoryUuid(test.api, deviceId));
  return accessory?.getService(hap.Service.MotionSensor)?.getCharacteristic(hap.Characteristic[name]).value;
}

/** Polls until the condition holds; bounded, and says what it waited for when it gives up. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  await pollUntil(condition, (held) => held, timeoutMs, what, 10);
}

export { setTimeout as delay } from 'node:timers/promises';

/** True once nothing listens on the port any more. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Rejects when something still listens on the port after `timeoutMs`. */
export async function untilPortFree(port: number, timeoutMs = 1_000): Promise<void> {
  await pollUntil(() => portIsFree(port), (free) => free, timeoutMs, `port ${port} to be free`, 10);
}

export async function temporaryStorage(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'doorbell-motion-platform-'));
  // Homebridge's shutdown event does not wait for a plugin: a stopped platform may still be finishing a
  // write (status.json, under the data folder's lock) while the folder goes, so its removal retries.
  return { path, remove: () => rm(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }) };
}
