/**
 * Proves the harness against a real Homebridge: start, pair as the Home app does, stop on
 * SIGTERM, restart on the same port, receive characteristic events, and no writes outside the
 * storage folder.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { changeOf, HapCharacteristic, HapService, HapTestClient } from '../../scripts/lib/hap-client.js';
import { HomebridgeSandbox, RUNNING_LINE, START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES, RUNTIME_SETUP_TIMEOUT_MS } from '../../scripts/lib/homebridge-versions.js';
import { MOTION_FIXTURE_PLUGIN } from '../../scripts/lib/paths.js';

const STEP_TIMEOUT_MS = START_TIMEOUT_MS + STOP_TIMEOUT_MS;

/** The fixture flips its sensor every 300 ms. */
const EVENT_TIMEOUT_MS = 5_000;

describe.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  let sandbox: HomebridgeSandbox;
  let homebridge: HomebridgeProcess;
  let controller: HapTestClient;

  beforeAll(async () => {
    await runtime.binary();
    sandbox = await HomebridgeSandbox.create();
    await sandbox.writeConfig();
  }, RUNTIME_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await controller?.close();
    await sandbox.dispose();
  }, STOP_TIMEOUT_MS * 2);

  it(
    'publishes the bridge with no platform block on its configured port, on loopback only',
    async () => {
      homebridge = await sandbox.start(runtime);

      const [, port] = await homebridge.waitForLine(RUNNING_LINE, START_TIMEOUT_MS);
      expect(Number(port)).toBe(sandbox.bridge.port);
      expect(homebridge.lines).toContain(`[loopback-guard] TCP listen on 0.0.0.0:${port} moved to 127.0.0.1`);
    },
    STEP_TIMEOUT_MS,
  );

  it('pairs with the setup PIN and lists the bridge as its only accessory', async () => {
    controller = await HapTestClient.pair(sandbox.bridge, sandbox.bridge.pin);

    const accessories = await controller.accessories();
    expect(accessories.map(({ aid }) => aid)).toEqual([1]);
    expect(accessories[0]?.name).toMatch(/^E2E Bridge/);
  });

  it(
    'exits within 12 s of SIGTERM',
    async () => {
      await controller.close();
      const stopped = await homebridge.stop(STOP_TIMEOUT_MS);
      expect(stopped.killed).toBe(false);
      expect(stopped.exitedAfterMs).toBeLessThan(STOP_TIMEOUT_MS);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'restarts on the same port, where the paired controller connects again',
    async () => {
      homebridge = await sandbox.start(runtime);
      expect(await accessoryIdsThenDisconnect(controller)).toEqual([1]);

      expect(homebridge.lines.filter((line) => line.includes('EADDRINUSE'))).toEqual([]);
      expect((await homebridge.stop(STOP_TIMEOUT_MS)).killed).toBe(false);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'delivers MotionDetected changes of a plugin motion sensor to the subscribed controller',
    async () => {
      await sandbox.writeConfig([{ platform: 'E2EMotionFixture', serialNumber: 'E2E-FIXTURE-1' }]);
      homebridge = await sandbox.start(runtime, MOTION_FIXTURE_PLUGIN);
      try {
        const sensor = await controller.accessoryWithSerialNumber('E2E-FIXTURE-1');
        const motionDetected = sensor.characteristic(HapService.MotionSensor, HapCharacteristic.MotionDetected);

        await controller.subscribe(motionDetected);
        await controller.nextEvent(changeOf(motionDetected, true), EVENT_TIMEOUT_MS);
        await controller.nextEvent(changeOf(motionDetected, false), EVENT_TIMEOUT_MS);
        expect(await controller.read(motionDetected)).toEqual([expect.any(Boolean)]);
      } finally {
        await controller.close();
      }
      expect((await homebridge.stop(STOP_TIMEOUT_MS)).killed).toBe(false);
    },
    STEP_TIMEOUT_MS,
  );

  it('wrote nothing outside its storage folder in any of these runs', async () => {
    expect(await sandbox.writesOutsideStorage()).toEqual([]);
  });
});

/** Lists accessory ids over a new connection, closed again before Homebridge stops. */
async function accessoryIdsThenDisconnect(controller: HapTestClient): Promise<number[]> {
  try {
    return (await controller.accessories()).map(({ aid }) => aid);
  } finally {
    await controller.close();
  }
}
