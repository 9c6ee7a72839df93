/**
 * On a bridge without Matter nothing Matter-related runs: with Homebridge 1's API (no
 * `isMatterEnabled`) and with Homebridge 2's when Matter is off, the platform signs in, subscribes and
 * shows motion as before, never loads the Matter room's code, and logs no line about Matter at any
 * level. (What it does with Matter on is tested end to end, in test/e2e/matter.e2e.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { API } from 'homebridge';
import { startSimulator, type Simulator } from '../simulator/index.js';
import { freeLoopbackPort } from '../scripts/lib/homebridge-config.js';
import type { MatterLoader } from '../src/matter-link.js';
import { DoorbellMotionPlatform } from '../src/platform.js';
import { createTestApi, createTestLogger, type TestApi, type TestLogger } from './support/homebridge-api.js';
import { ACCOUNT, DOORBELLS, FAST, platformConfig, portIsFree, sensorValue, temporaryStorage, waitFor } from './support/platform-harness.js';
import { pollUntil } from './support/poll.js';

const BRIDGES: ReadonlyArray<[string, (api: API) => void]> = [
  ['Homebridge 1 (no isMatterEnabled)', () => undefined],
  // `matter` as well: whatever else is there, Matter off means off.
  ['Homebridge 2 with Matter off', (api) => Object.assign(api, { isMatterEnabled: () => false, isMatterAvailable: () => true, matter: {} })],
];

let sim: Simulator;
let storage: Awaited<ReturnType<typeof temporaryStorage>>;
let pushPort: number;
let running: TestApi | undefined;

beforeEach(async () => {
  sim = await startSimulator({ accounts: [{ ...ACCOUNT }], doorbells: DOORBELLS.map(({ deviceId }) => deviceId) });
  storage = await temporaryStorage();
  pushPort = await freeLoopbackPort();
});

afterEach(async () => {
  running?.shutdown();
  running = undefined;
  await pollUntil(() => portIsFree(pushPort), (free) => free, 1_000, 'the receiver to close', 10);
  await sim.close();
  await storage.remove();
});

/** Launches the platform as Homebridge does, on `bridge`'s API, counting loads of the Matter room. */
function launch(prepare: (api: API) => void, config = platformConfig(sim, pushPort)): { test: TestApi; log: TestLogger; loads: () => number } {
  const test = createTestApi({ storagePath: storage.path });
  prepare(test.api);
  const log = createTestLogger();
  let loads = 0;
  const loadMatter: MatterLoader = () => {
    loads += 1;
    return import('../src/matter/matter-doorbells.js');
  };
  new DoorbellMotionPlatform(log, config, test.api, FAST, loadMatter);
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
