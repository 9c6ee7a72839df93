/**
 * What every platform test file needs around the platform it launches: a fresh simulator, storage and
 * push port per test, launches that are shut down after it, and the questions tests ask of them.
 */
import { afterEach, beforeEach } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { API, PlatformAccessory, PlatformConfig } from 'homebridge';
import { startRelay, type Relay, type RelayOptions } from '../../simulator/relay/index.js';
import type { RecordedRequest } from '../../simulator/types.js';
import type { PlatformTiming } from '../../src/platform.js';
import { DATA_FILES, dataFolderPath } from '../../src/storage/data-folder.js';
import type { DeliveryStatus } from '../../src/status/delivery-status.js';
import { freeLoopbackPort } from '../../scripts/lib/homebridge-config.js';
import { eachTest, useSimulator } from './each-test.js';
import { reloadFromCache } from '../../scripts/lib/homebridge-api.js';
import { ACCOUNT, DOORBELLS, FAST, launchPlatform, platformConfig, sensorValue, temporaryStorage, untilPortFree, waitFor } from '../../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../../scripts/lib/platform-harness.js';
import { pollUntil } from '../../scripts/lib/poll.js';

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

/** HomeKit's view, not the simulator's: the service records a subscription before the plugin hears back. */
export function allConfirmed({ test }: RunningPlatform, doorbells: ReadonlyArray<{ deviceId: string }> = DOORBELLS): boolean {
  return doorbells.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 0);
}

/** The platform writes its first status at launch and each change within a second. */
export const STATUS_WRITTEN_MS = 3_000;

export function logged(platform: RunningPlatform, text: string): boolean {
  return platform.log.lines.some((line) => line.message.includes(text));
}

/** `onSimulatorRequest` is told of each request the simulator answered, the moment it did: for what happened in between. */
export function usePlatformTestbed(
  doorbellIds: readonly string[] = DOORBELLS.map(({ deviceId }) => deviceId),
  { onSimulatorRequest }: { onSimulatorRequest?: (request: RecordedRequest) => void } = {},
) {
  let pushPort = 0;
  const running: RunningPlatform[] = [];
  /** Shuts a platform down as Homebridge does, and waits until its receiver's port is free. */
  const stopPlatform = async (platform: RunningPlatform) => {
    platform.test.shutdown();
    await untilPortFree(pushPort);
  };
  beforeEach(async () => {
    pushPort = await freeLoopbackPort();
  });
  // Before the simulator and the storage go.
  afterEach(async () => {
    await Promise.all(running.splice(0).map(stopPlatform));
  });
  const sim = useSimulator({ accounts: [{ ...ACCOUNT }], doorbells: [...doorbellIds], onRequest: onSimulatorRequest });
  const storage = eachTest('storage', temporaryStorage, (folder) => folder.remove());
  const statusPath = () => join(dataFolderPath(storage().path), DATA_FILES.status);

  /** status.json as the platform last wrote it; undefined before its first write. */
  async function readStatus(): Promise<DeliveryStatus | undefined> {
    try {
      return JSON.parse(await readFile(statusPath(), 'utf8')) as DeliveryStatus;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return undefined;
      }
      throw error;
    }
  }

  return {
    get sim() {
      return sim();
    },
    get storagePath() {
      return storage().path;
    },
    get pushPort() {
      return pushPort;
    },
    get statusPath() {
      return statusPath();
    },
    readStatus,
    /**
     * Waits, bounded, until status.json holds what `holds` accepts, and returns it; `read` reads it
     * (readStatus unless a test checks each read as well).
     */
    statusWhere(what: string, holds: (status: DeliveryStatus) => boolean, read: () => Promise<DeliveryStatus | undefined> = readStatus): Promise<DeliveryStatus> {
      return pollUntil(read, (status) => status !== undefined && holds(status), STATUS_WRITTEN_MS, what, 50) as Promise<DeliveryStatus>;
    },
    launch({ overrides = {}, cached, timing = FAST, relayUrl, doorbells, block, prepare }: LaunchOptions = {}): RunningPlatform {
      const restored = cached === undefined ? [] : [...cached.values()].map(reloadFromCache);
      const config = block ?? platformConfig(sim(), relayUrl ?? pushPort, { ...(doorbells ? { doorbells } : {}), ...overrides });
      const platform = launchPlatform(config, storage().path, restored, timing, prepare);
      running.push(platform);
      return platform;
    },
    /**
     * Waits until the launch's work is done: every doorbell confirmed, and the doorbell list read that
     * follows the first run answered. A test that resets the simulator's records after stopping the
     * platform then finds none of that launch's requests still on its way.
     */
    untilLaunchDone(platform: RunningPlatform): Promise<void> {
      return waitFor(() => allConfirmed(platform) && sim().requestsTo('devices').length > 0, 'the subscriptions and the doorbell list read');
    },
    async stop(platform: RunningPlatform): Promise<void> {
      running.splice(running.indexOf(platform), 1);
      await stopPlatform(platform);
    },
  };
}

/**
 * A loopback relay for each test of the block it is called in, its keepalives well within the alive
 * timeout (as ntfy's 45 s are within the production 100 s); the getter gives the current one. `now`:
 * the relay's clock, which stamps every `time` it writes (Date.now when absent).
 */
export function useLoopbackRelay({ now }: Pick<RelayOptions, 'now'> = {}): () => Relay {
  return eachTest('relay', () => startRelay({ keepaliveMs: FAST.relay.aliveMs / 4, ...(now === undefined ? {} : { now }) }), (relay) => relay.close());
}
