/**
 * The plugin in this process: the real platform with real HAP services and characteristics (the test
 * harness's Homebridge API), against the simulator with its fixed cloud latency, in production timing.
 * What HomeKit would see is read from the characteristics themselves, as their change events.
 */
import type { Characteristic, PlatformAccessory } from 'homebridge';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { accessoryUuid, MIN_RING_INTERVAL_MS } from '../../src/accessories/doorbell-accessory.js';
import { PRODUCTION_TIMING } from '../../src/platform.js';
import { hap } from '../lib/hap.js';
import type { TestApi } from '../lib/homebridge-api.js';
import { ACCOUNT, delay, launchPlatform, platformConfig, portIsFree, type RunningPlatform } from '../lib/platform-harness.js';
import { pollUntil } from '../lib/poll.js';
import { ARRIVAL_TIMEOUT_MS, type LatencyProbe, type RingPace, type Signal } from './latency.js';
import { CLOUD_LATENCY_MS, doorbellEntries, type BenchSettings } from './settings.js';

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
  /**
   * Several accounts instead of the harness's one: each its own sign-in and doorbells, as entries of
   * `accounts` (the doorbells above are then theirs, in order).
   */
  accounts?: ReadonlyArray<BenchAccount>;
}

/** An account of the simulator's, with a code to sign in with and its own doorbells. */
export interface BenchAccount {
  email: string;
  code: string;
  doorbells: readonly string[];
}

/**
 * A doorbell presses at most once in 5 s, by the clock the plugin reads as it accepts a notification.
 * Here each notification is accepted 5 s after the one before on that clock, so that a thousand rings
 * can be timed in seconds: the rule still runs at every ring, and lets each through.
 */
function ringsAlwaysDue(): () => number {
  let now = 0;
  return () => (now += MIN_RING_INTERVAL_MS);
}

/**
 * Through a relay, the 5 s between two presses count by the relay's own time of each ring, which the
 * relay stamps as it takes it. The bench's relay clock likewise moves on 5 s at every reading, so each
 * ring it stamps is due as well (its keepalives too: the plugin's clock for the relay only ever
 * sees it run ahead, which it tolerates with one warning).
 */
export function relayTimeAlwaysDue(): () => number {
  let ahead = 0;
  return () => Date.now() + (ahead += MIN_RING_INTERVAL_MS);
}

/** In this process every ring is due (see ringsAlwaysDue): the rings are timed back to back. */
export function inProcessRings({ latencySamples }: BenchSettings): RingPace {
  return { samples: latencySamples, gapMs: 0 };
}

export function launchInProcess({ sim, push, storagePath, doorbells, cached = [], accounts }: InProcessLaunch): RunningPlatform {
  const timing = { ...PRODUCTION_TIMING, monotonicNow: ringsAlwaysDue() };
  const config = platformConfig(sim, push, { doorbells: doorbellEntries(doorbells) });
  if (accounts === undefined) {
    return launchPlatform(config, storagePath, cached, timing);
  }
  // The block's one account becomes an entry per account, each with the same servers; the platform-wide keys stay.
  const { platform, name, motionTimeout, push: pushSettings, account, doorbellServerUrl } = config;
  const entries = accounts.map(({ email, code, doorbells: own }, index) => ({
    label: `Account ${index + 1}`,
    account: { ...(account as Record<string, unknown>), email, code },
    doorbellServerUrl,
    doorbells: doorbellEntries(own),
  }));
  return launchPlatform({ platform, name, motionTimeout, push: pushSettings, accounts: entries }, storagePath, cached, timing);
}

/** Homebridge's shutdown signal; resolves once a direct receiver's port is free again. */
export async function stopInProcess({ test }: RunningPlatform, push: number | string): Promise<void> {
  test.shutdown();
  await delay(SHUTDOWN_GRACE_MS);
  if (typeof push === 'number') {
    await pollUntil(() => portIsFree(push), (free) => free, 5_000, `port ${push} to be free`, 20);
  }
}

const { Characteristic: C, Service: S } = hap;

/**
 * The characteristics a benchmark watches or turns, by service, subtype and characteristic: motion
 * and fault on the main sensor, a person's motion on the person sensor, a ring on the doorbell
 * service (the programmable switch alone with the Chime off), and the Chime switch.
 */
const CHARACTERISTICS = {
  motion: [S.MotionSensor, undefined, C.MotionDetected],
  personMotion: [S.MotionSensor, 'person', C.MotionDetected],
  fault: [S.MotionSensor, undefined, C.StatusFault],
  ring: [S.Doorbell, undefined, C.ProgrammableSwitchEvent],
  silentRing: [S.StatelessProgrammableSwitch, undefined, C.ProgrammableSwitchEvent],
  chime: [S.Switch, 'chime', C.On],
} as const;

export function characteristicOf(test: TestApi, deviceId: string, which: keyof typeof CHARACTERISTICS): Characteristic {
  const [type, subtype, characteristic] = CHARACTERISTICS[which];
  const service = test.registered.get(accessoryUuid(test.api, deviceId))?.services.find((candidate) => candidate.UUID === type.UUID && candidate.subtype === subtype);
  if (service === undefined) {
    throw new Error(`doorbell ${deviceId} has no ${which} characteristic`);
  }
  return service.getCharacteristic(characteristic);
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

/**
 * A ring is seen as a ProgrammableSwitchEvent event, a motion as MotionDetected turning true; the
 * Chime is turned through HAP's own set handling, as a controller's write is.
 */
export function characteristicProbe(test: TestApi): LatencyProbe {
  const isMotion = (signal: Signal): boolean => signal === 'motion' || signal === 'personMotion';
  return {
    watch: (deviceId, signal) => nextChange(characteristicOf(test, deviceId, signal), (value) => !isMotion(signal) || value === true, ARRIVAL_TIMEOUT_MS),
    setChime: async (doorbells, on) => {
      for (const deviceId of doorbells) {
        await characteristicOf(test, deviceId, 'chime').handleSetRequest(on);
      }
    },
  };
}
