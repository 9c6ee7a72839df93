/**
 * The plugin in this process: the real platform with real HAP services and characteristics (the test
 * harness's Homebridge API), against the simulator with its fixed cloud latency, in production timing.
 * What HomeKit would see is read from the characteristics themselves, as their change events.
 */
import type { Characteristic, PlatformAccessory } from 'homebridge';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { accessoryUuid } from '../../src/accessories/doorbell-accessory.js';
import { PRODUCTION_TIMING } from '../../src/platform.js';
import { hap } from '../../test/support/hap.js';
import type { TestApi } from '../../test/support/homebridge-api.js';
import { ACCOUNT, delay, launchPlatform, platformConfig, portIsFree, type RunningPlatform } from '../../test/support/platform-harness.js';
import { pollUntil } from '../../test/support/poll.js';
import { ARRIVAL_TIMEOUT_MS, type Watch } from './latency.js';
import { CLOUD_LATENCY_MS, doorbellEntries } from './settings.js';

/** Start-up against a 100 ms cloud takes seconds; a wait this long means something broke. */
const CONFIRM_TIMEOUT_MS = 30_000;

/** The relay stream and the session watcher close in the background after Homebridge's shutdown signal. */
const SHUTDOWN_GRACE_MS = 250;

/** The simulated cloud of a benchmark: the harness's account, these doorbells, every request 100 ms late. */
export function startBenchCloud(doorbells: readonly string[]): Promise<Simulator> {
  return startSimulator({ accounts: [{ ...ACCOUNT }], doorbells: [...doorbells], latencyMs: CLOUD_LATENCY_MS });
}

export interface InProcessLaunch {
  sim: Simulator;
  /** Direct mode on this loopback port, or relay mode through the relay at this URL. */
  push: number | string;
  storagePath: string;
  doorbells: readonly string[];
  /** The accessories of an earlier run, as Homebridge restores them from its cache. */
  cached?: PlatformAccessory[];
}

export function launchInProcess({ sim, push, storagePath, doorbells, cached = [] }: InProcessLaunch): RunningPlatform {
  return launchPlatform(platformConfig(sim, push, { doorbells: doorbellEntries(doorbells) }), storagePath, cached, PRODUCTION_TIMING);
}

/** Homebridge's shutdown signal; resolves once a direct receiver's port is free again. */
export async function stopInProcess({ test }: RunningPlatform, push: number | string): Promise<void> {
  test.shutdown();
  await delay(SHUTDOWN_GRACE_MS);
  if (typeof push === 'number') {
    await pollUntil(() => portIsFree(push), (free) => free, 5_000, `port ${push} to be free`, 20);
  }
}

/** The characteristics a benchmark watches: motion and fault on the sensor, a ring on the doorbell service. */
const SIGNALS = {
  motion: [hap.Service.MotionSensor, hap.Characteristic.MotionDetected],
  fault: [hap.Service.MotionSensor, hap.Characteristic.StatusFault],
  ring: [hap.Service.Doorbell, hap.Characteristic.ProgrammableSwitchEvent],
} as const;

export type Signal = keyof typeof SIGNALS;

export function characteristicOf(test: TestApi, deviceId: string, signal: Signal): Characteristic {
  const [service, characteristic] = SIGNALS[signal];
  const found = test.registered.get(accessoryUuid(test.api, deviceId))?.getService(service)?.getCharacteristic(characteristic);
  if (found === undefined) {
    throw new Error(`doorbell ${deviceId} has no ${signal} characteristic`);
  }
  return found;
}

/**
 * performance.now() at the characteristic's next change event whose new value `accepts` (HAP's own
 * event, the one its server turns into a notification to controllers). Rejects after `timeoutMs`.
 */
function nextChange(characteristic: Characteristic, accepts: (value: unknown) => boolean, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onChange = ({ newValue }: { newValue: unknown }): void => {
      if (accepts(newValue)) {
        settle();
        resolve(performance.now());
      }
    };
    const settle = (): void => {
      clearTimeout(timer);
      characteristic.off('change', onChange);
    };
    const timer = setTimeout(() => {
      settle();
      reject(new Error(`${characteristic.displayName} did not change within ${timeoutMs} ms`));
    }, timeoutMs);
    characteristic.on('change', onChange);
  });
}

/** Resolves once every doorbell's fault has cleared: its subscription confirmed, as HomeKit sees it. */
export async function whenAllConfirmed(test: TestApi, doorbells: readonly string[]): Promise<void> {
  const NO_FAULT = hap.Characteristic.StatusFault.NO_FAULT;
  const faults = doorbells.map((deviceId) => characteristicOf(test, deviceId, 'fault'));
  await Promise.all(faults.filter(({ value }) => value !== NO_FAULT).map((fault) => nextChange(fault, (value) => value === NO_FAULT, CONFIRM_TIMEOUT_MS)));
}

/** A ring is seen as the doorbell service's ProgrammableSwitchEvent event, a motion as MotionDetected turning true. */
export function characteristicWatch(test: TestApi): Watch {
  return (deviceId, kind) =>
    kind === 'ding'
      ? nextChange(characteristicOf(test, deviceId, 'ring'), () => true, ARRIVAL_TIMEOUT_MS)
      : nextChange(characteristicOf(test, deviceId, 'motion'), (value) => value === true, ARRIVAL_TIMEOUT_MS);
}
