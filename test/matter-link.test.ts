/**
 * On a bridge without Matter nothing Matter-related runs: with Homebridge 1's API (no
 * `isMatterEnabled`) and with Homebridge 2's when Matter is off, the platform signs in, subscribes and
 * shows motion as before, never loads the code of `matter/`, and logs no line about Matter at any
 * level; when Matter is on for another bridge only (so Homebridge refuses this one's registration),
 * nothing about Matter above debug. And whatever Homebridge's Matter side does (throws, rejects, never
 * answers, never registers), HomeKit works as before and nothing goes unhandled. (What the platform does
 * with Matter on is tested end to end, in test/e2e/matter.e2e.test.ts.)
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { API } from 'homebridge';
import { startSimulator, type Simulator } from '../simulator/index.js';
import { freeLoopbackPort } from '../scripts/lib/homebridge-config.js';
import type { MatterLoader } from '../src/matter-link.js';
import { DoorbellMotionPlatform, type PlatformTiming } from '../src/platform.js';
import { FakeMatter, type FakeRegistration } from './support/fake-matter.js';
import { createTestApi, createTestLogger, type TestApi, type TestLogger } from '../scripts/lib/homebridge-api.js';
import { ACCOUNT, delay, DOORBELLS, FAST, platformConfig, sensorValue, temporaryStorage, untilPortFree, waitFor } from '../scripts/lib/platform-harness.js';
import { pollUntil } from '../scripts/lib/poll.js';

const BRIDGES: ReadonlyArray<[string, (api: API) => void]> = [
  ['Homebridge 1 (no isMatterEnabled)', () => undefined],
  // `matter` as well: whatever else is there, Matter off means off.
  ['Homebridge 2 with Matter off', (api) => Object.assign(api, { isMatterEnabled: () => false, isMatterAvailable: () => true, matter: {} })],
];

let sim: Simulator;
let storage: Awaited<ReturnType<typeof temporaryStorage>>;
let pushPort: number;
let running: TestApi | undefined;
let fakeMatter: FakeMatter | undefined;

beforeEach(async () => {
  sim = await startSimulator({ accounts: [{ ...ACCOUNT }], doorbells: DOORBELLS.map(({ deviceId }) => deviceId) });
  storage = await temporaryStorage();
  pushPort = await freeLoopbackPort();
});

afterEach(async () => {
  running?.shutdown();
  running = undefined;
  fakeMatter?.dispose();
  fakeMatter = undefined;
  await untilPortFree(pushPort);
  await sim.close();
  await storage.remove();
});

/** Launches the platform as Homebridge does, on `bridge`'s API, counting loads of `matter/`. */
function launch(
  prepare: (api: API) => void,
  config = platformConfig(sim, pushPort),
  timing: PlatformTiming = FAST,
): { test: TestApi; log: TestLogger; loads: () => number } {
  const test = createTestApi({ storagePath: storage.path });
  prepare(test.api);
  const log = createTestLogger();
  let loads = 0;
  const loadMatter: MatterLoader = () => {
    loads += 1;
    return import('../src/matter/matter-doorbells.js');
  };
  new DoorbellMotionPlatform(log, config, test.api, timing, loadMatter);
  test.launch();
  running = test;
  return { test, log, loads: () => loads };
}

describe.each(BRIDGES)('%s', (_label, prepare) => {
  it('shows motion as before, loads no Matter code, and logs nothing about Matter', async () => {
    const { test, log, loads } = launch(prepare);
    await waitFor(() => DOORBELLS.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 0), 'every doorbell subscribed');

    expect((await sim.deliverMotion(DOORBELLS[0].deviceId)).status).toBe(202);
    expect(sensorValue(test, DOORBELLS[0].deviceId, 'MotionDetected')).toBe(true);
    expect(loads()).toBe(0);
    expect(log.lines.filter(({ message }) => /matter/i.test(message))).toEqual([]);
  });

  it('loads no Matter code with a config it cannot use either', async () => {
    const { log, loads } = launch(prepare, { ...platformConfig(sim, pushPort), doorbellServerUrl: 'not a url' });
    await waitFor(() => log.lines.some(({ message }) => message.includes('Doing nothing')), 'the config refused');

    expect(loads()).toBe(0);
    expect(log.lines.filter(({ message }) => /matter/i.test(message))).toEqual([]);
  });
});

/** A registration not done after this is warned of. */
const SLOW_AFTER_MS = 300;
const WITH_MATTER: PlatformTiming = { ...FAST, matter: { firstCheckMs: 10, longestCheckMs: 100, slowAfterMs: SLOW_AFTER_MS } };

/** Homebridge's Matter side as `registration` has it, installed on the platform's API. */
function withMatter(registration: FakeRegistration): (api: API) => void {
  return (api) => {
    fakeMatter = new FakeMatter({ registration });
    fakeMatter.install(api);
  };
}

/** Lines about Matter the user reads without debug on. */
function matterLinesAboveDebug(log: TestLogger): string[] {
  return log.lines.filter(({ level, message }) => level !== 'debug' && /matter/i.test(message)).map(({ level, message }) => `${level}: ${message}`);
}

/**
 * Shows motion at the first doorbell. Awaited, not timed: a HomeKit side that waited for Matter would
 * never show it while the registration hangs or never registers, however fast the machine.
 */
async function motionShown(test: TestApi): Promise<void> {
  await waitFor(() => DOORBELLS.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 0), 'every doorbell subscribed');
  expect((await sim.deliverMotion(DOORBELLS[0].deviceId)).status).toBe(202);
  await waitFor(() => sensorValue(test, DOORBELLS[0].deviceId, 'MotionDetected') === true, 'motion in HomeKit');
}

describe('Homebridge 2 with Matter on for another bridge only (a child bridge), as Homebridge refuses this one', () => {
  it('shows motion as before, and logs nothing about Matter above debug', async () => {
    const { test, log } = launch(withMatter('refuses'), platformConfig(sim, pushPort), WITH_MATTER);
    await motionShown(test);
    await pollUntil(() => fakeMatter?.countOf('registerPlatformAccessories') ?? 0, (calls) => calls > 0, 5_000, 'a registration tried', 10);
    await delay(SLOW_AFTER_MS + 100);

    expect(matterLinesAboveDebug(log)).toEqual([]);
    expect(log.lines.filter(({ level, message }) => level === 'debug' && message.includes('Matter: not on for this bridge'))).toHaveLength(1);
  });
});

describe('whatever Homebridge\'s Matter side does', () => {
  /** Throws or rejections that nothing handled, while the platform ran. */
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', record);
  });
  afterAll(() => {
    process.off('unhandledRejection', record);
  });
  beforeEach(() => {
    unhandled.length = 0;
  });

  const NONE_REGISTERED = /^warn: Matter: Homebridge has registered 0 of the doorbells' 5 Matter devices in \d+ s, none for \d+ s; Front Door and those after it/;
  const failures: ReadonlyArray<[string, FakeRegistration, RegExp]> = [
    ['throws', 'throws', /^warn: Matter: the doorbells could not be published: Cannot read properties/],
    ['rejects', 'rejects', /^warn: Matter: the doorbells could not be published: Matter server not started$/],
    ['never returns', 'hangs', NONE_REGISTERED],
    ['returns but never registers', 'never', NONE_REGISTERED],
  ];
  it.each(failures)('when its registration %s, HomeKit shows motion at once, nothing goes unhandled, and one warning says so', async (_title, registration, warning) => {
    const { test, log } = launch(withMatter(registration), platformConfig(sim, pushPort), WITH_MATTER);

    await motionShown(test);
    await pollUntil(() => matterLinesAboveDebug(log), (lines) => lines.some((line) => warning.test(line)), SLOW_AFTER_MS + 10_000, 'the warning', 10);
    await delay(SLOW_AFTER_MS);
    expect(matterLinesAboveDebug(log).filter((line) => line.startsWith('warn'))).toEqual([expect.stringMatching(warning)]);
    expect(unhandled).toEqual([]);
  });
});
