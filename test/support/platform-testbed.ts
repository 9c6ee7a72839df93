/**
 * What every platform test file needs around the platform it launches: a fresh simulator, storage and
 * push port per test, launches that are shut down after it, and the questions tests ask of them.
 */
import { afterEach, beforeEach } from '@jest/globals';
import type { API, PlatformAccessory, PlatformConfig } from 'homebridge';
import { startSimulator } from '../../simulator/index.js';
import { startRelay, type Relay } from '../../simulator/relay/index.js';
import type { RecordedRequest, Simulator } from '../../simulator/types.js';
import type { PlatformTiming } from '../../src/platform.js';
import { freeLoopbackPort } from '../../scripts/lib/homebridge-config.js';
import { reloadFromCache } from './homebridge-api.js';
import { ACCOUNT, DOORBELLS, FAST, launchPlatform, platformConfig, portIsFree, sensorValue, temporaryStorage } from './platform-harness.js';
import type { RunningPlatform } from './platform-harness.js';
import { pollUntil } from './poll.js';

export interface LaunchOptions {
  overrides?: Record<string, unknown>;
  /** The accessories of an earlier run, restored from Homebridge's cache. */
  cached?: Map<string, PlatformAccessory>;
  timing?: PlatformTiming;
  /** Relay mode through this relay; direct mode on the testbed's push port without it. */
  relayUrl?: string;
  /** Doorbells of the config block; default DOORBELLS. */
  doorbells?: ReadonlyArray<{ deviceId: string; name: string }>;
  /** This exact platform block instead of the simulator's. */
  block?: PlatformConfig;
  /** Changes Homebridge's API before the platform sees it (FakeMatter's install, say). */
  prepare?: (api: API) => void;
}

export interface PlatformTestbed {
  readonly sim: Simulator;
  readonly storagePath: string;
  readonly pushPort: number;
  launch(options?: LaunchOptions): RunningPlatform;
  /** Shuts a platform down as Homebridge does, and waits until its receiver's port is free. */
  stop(platform: RunningPlatform): Promise<void>;
}

/** HomeKit's view, not the simulator's: the service records a subscription before the plugin hears back. */
export function allConfirmed({ test }: RunningPlatform, doorbells: ReadonlyArray<{ deviceId: string }> = DOORBELLS): boolean {
  return doorbells.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 0);
}

export function logged(platform: RunningPlatform, text: string): boolean {
  return platform.log.lines.some((line) => line.message.includes(text));
}

/** Rejects when something still listens on the port after a second. */
async function waitUntilFree(port: number): Promise<void> {
  await pollUntil(() => portIsFree(port), (free) => free, 1_000, `port ${port} to be free`, 10);
}

export interface TestbedOptions {
  /** Told of each request the simulator answered, the moment it did: for what happened in between. */
  onSimulatorRequest?: (request: RecordedRequest) => void;
}

export function usePlatformTestbed(
  doorbellIds: readonly string[] = DOORBELLS.map(({ deviceId }) => deviceId),
  { onSimulatorRequest }: TestbedOptions = {},
): PlatformTestbed {
  let sim: Simulator | undefined;
  let storage: Awaited<ReturnType<typeof temporaryStorage>> | undefined;
  let pushPort = 0;
  const running: RunningPlatform[] = [];

  beforeEach(async () => {
    sim = await startSimulator({ accounts: [{ ...ACCOUNT }], doorbells: [...doorbellIds], onRequest: onSimulatorRequest });
    storage = await temporaryStorage();
    pushPort = await freeLoopbackPort();
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((platform) => stopPlatform(platform)));
    await sim?.close();
    await storage?.remove();
  });

  async function stopPlatform(platform: RunningPlatform): Promise<void> {
    platform.test.shutdown();
    await waitUntilFree(pushPort);
  }

  const required = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) {
      throw new Error(`The ${what} starts in beforeEach; use it inside tests and hooks`);
    }
    return value;
  };

  return {
    get sim() {
      return required(sim, 'simulator');
    },
    get storagePath() {
      return required(storage, 'storage').path;
    },
    get pushPort() {
      return pushPort;
    },
    launch({ overrides = {}, cached, timing = FAST, relayUrl, doorbells, block, prepare }: LaunchOptions = {}) {
      const restored = cached === undefined ? [] : [...cached.values()].map(reloadFromCache);
      const config = block ?? platformConfig(this.sim, relayUrl ?? pushPort, { ...(doorbells ? { doorbells } : {}), ...overrides });
      const platform = launchPlatform(config, this.storagePath, restored, timing, prepare);
      running.push(platform);
      return platform;
    },
    async stop(platform) {
      running.splice(running.indexOf(platform), 1);
      await stopPlatform(platform);
    },
  };
}

/**
 * A loopback relay for each test of the block it is called in, its keepalives well within the alive
 * timeout (as ntfy's 45 s are within the production 100 s); the getter gives the current one.
 */
export function useLoopbackRelay(): () => Relay {
  let relay: Relay | undefined;
  beforeEach(async () => {
    relay = await startRelay({ keepaliveMs: FAST.relay.aliveMs / 4 });
  });
  afterEach(async () => {
    await relay?.close();
  });
  return () => relay as Relay;
}
