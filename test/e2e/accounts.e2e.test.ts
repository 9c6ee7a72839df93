/**
 * Two accounts in one platform block, on a real Homebridge 2.4.0 with Matter on, beside a real HomeKit
 * controller and a matter.js controller in a private network: both accounts' doorbells are published
 * both ways and a motion at a doorbell of each reaches the controller; after a restart that finds the
 * second account's session revoked by the service, only that account's doorbells are in fault, its
 * label named in the log, while the first account's motion still arrives.
 */
import { expect, it } from '@jest/globals';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf, findBySerialNumber, HapCharacteristic, HapService, type CharacteristicRef } from '../../scripts/lib/hap-client.js';
import { STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { MATTER_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { CONNECT_TIMEOUT_MS, MatterDeviceType } from '../../scripts/lib/matter/matter-client.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { ACCOUNT, doorbellMotionPlatform, MOTION_TIMEOUT_S, PLATFORM_LOG_NAME } from './support/plugin-config.js';
import { problemLines } from './support/log-problems.js';
import { expectRunningOnce, GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup } from './support/plugin-setup.js';

/** The first account is the simulator's standard one; two of its doorbells. */
const HOME_DOORBELLS = [
  { deviceId: '1234567', name: 'Front Door' },
  { deviceId: 42, name: 'Back Door' },
] as const;

/** The second account, added to the simulator with two doorbells of its own. */
const CABIN = { email: 'cabin@example.com', code: '000222', country: 'US', countryCode: '1' } as const;
const CABIN_DOORBELLS = [
  { deviceId: '2000001', name: 'Cabin Porch' },
  { deviceId: '2000002', name: 'Cabin Shed' },
] as const;

const HOME_SERIALS = HOME_DOORBELLS.map(({ deviceId }) => String(deviceId));
const CABIN_SERIALS = CABIN_DOORBELLS.map(({ deviceId }) => deviceId as string);
const ALL_SERIALS = [...HOME_SERIALS, ...CABIN_SERIALS];

const SUBSCRIBED_TIMEOUT_MS = 15_000;
const REPORT_TIMEOUT_MS = 5_000;
/** A run's start, the Matter controller's connection and the stop. */
const RUN_TIMEOUT_MS = CONNECT_TIMEOUT_MS + STOP_TIMEOUT_MS;

describeWithBuiltPlugin.each(MATTER_RUNTIMES.slice(0, 1))('$label with two accounts and Matter on', (runtime) => {
  const setup = usePluginSetup(
    runtime,
    async ({ sandbox, simulator, endpoints }) => {
      simulator.addAccount({ ...CABIN, doorbells: [...CABIN_SERIALS] });
      const { platform, name, motionTimeout, push, account, doorbellServerUrl } = doorbellMotionPlatform(endpoints) as Record<string, unknown> & { account: Record<string, unknown> };
      const home = { label: 'Home', account, doorbellServerUrl, doorbells: HOME_DOORBELLS };
      const cabin = { label: 'Cabin', account: { ...account, ...CABIN }, doorbellServerUrl, doorbells: CABIN_DOORBELLS };
      await sandbox.writeConfig([{ platform, name, motionTimeout, push, accounts: [home, cabin] }]);
    },
    { matter: true },
  );

  /** One doorbell's motion sensor characteristics at the HomeKit controller. */
  async function sensor(serialNumber: string): Promise<{ motion: CharacteristicRef; fault: CharacteristicRef }> {
    const accessory = findBySerialNumber(await (await setup().controller()).accessories(), serialNumber);
    return {
      motion: accessory.characteristic(HapService.MotionSensor, HapCharacteristic.MotionDetected),
      fault: accessory.characteristic(HapService.MotionSensor, HapCharacteristic.StatusFault),
    };
  }

  async function faultsOf(serials: readonly string[]): Promise<unknown[]> {
    const refs = await Promise.all(serials.map(async (serial) => (await sensor(serial)).fault));
    return (await setup().controller()).read(...refs);
  }

  async function waitForFaults(serials: readonly string[], expected: number): Promise<void> {
    await pollUntil(() => faultsOf(serials), (faults) => faults.every((fault) => fault === expected), SUBSCRIBED_TIMEOUT_MS, `StatusFault ${expected} on ${serials.join(', ')}`);
  }

  /** A motion at the doorbell, seen as MotionDetected turning true at the controller. */
  async function expectMotionArrives(serialNumber: string, id: string): Promise<void> {
    // A connection of its own for each: a connection subscribes once, as the Home app's each do.
    const watch = (await setup().controller()).anotherConnection();
    try {
      const { motion } = await sensor(serialNumber);
      await watch.subscribe(motion);
      const seen = watch.nextEvent(changeOf(motion, true), REPORT_TIMEOUT_MS);
      expect(await setup().simulator.deliverMotion(serialNumber, { id })).toMatchObject({ status: 202 });
      await seen;
    } finally {
      await watch.close();
    }
  }

  it(
    'publishes both accounts\' doorbells to the HomeKit controller and over Matter, each subscribed by its own account',
    async () => {
      await setup().start();
      await waitForFaults(ALL_SERIALS, NO_FAULT);

      const devices = await pollUntil(
        () => setup().matter.bridgedDevices(),
        (shown) => shown.filter(({ deviceTypes }) => deviceTypes.includes(MatterDeviceType.OccupancySensor)).every(({ reachable }) => reachable === true),
        REPORT_TIMEOUT_MS,
        'every doorbell reachable over Matter',
      );
      const occupancySerials = devices.filter(({ deviceTypes }) => deviceTypes.includes(MatterDeviceType.OccupancySensor)).map(({ serialNumber }) => serialNumber);
      expect(occupancySerials.sort()).toEqual([...ALL_SERIALS].sort());

      const { simulator } = setup();
      const subscribedBy = (email: string) => simulator.requestsOf(email).filter(({ route, status }) => route === 'subscribe' && status === 200).map(({ path }) => path.split('/')[3]).sort();
      expect(subscribedBy(ACCOUNT.email)).toEqual([...HOME_SERIALS].sort());
      expect(subscribedBy(CABIN.email)).toEqual([...CABIN_SERIALS].sort());
    },
    RUN_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS + REPORT_TIMEOUT_MS,
  );

  it('shows a motion at a doorbell of each account at the controller', async () => {
    await expectMotionArrives(HOME_SERIALS[0], 'home-motion-1');
    await expectMotionArrives(CABIN_SERIALS[0], 'cabin-motion-1');
  });

  it(
    'after a restart that finds the cabin\'s session revoked: only the cabin\'s doorbells in fault, its label in the log, the home\'s motion still arriving',
    async () => {
      await setup().stop();
      setup().simulator.revokeAccount(CABIN.email);
      const homebridge = await setup().start();

      await homebridge.waitForLine(new RegExp(`\\[${PLATFORM_LOG_NAME}\\] \\[Cabin\\] .*no longer accepts this session`, 'i'), SUBSCRIBED_TIMEOUT_MS);
      await waitForFaults(CABIN_SERIALS, GENERAL_FAULT);
      await waitForFaults(HOME_SERIALS, NO_FAULT);
      expect(homebridge.lines.filter((line) => /\[Home\] .*no longer accepts/i.test(line))).toEqual([]);

      await expectMotionArrives(HOME_SERIALS[1], 'home-motion-after-revoke');
      expect(await faultsOf(ALL_SERIALS)).toEqual([NO_FAULT, NO_FAULT, GENERAL_FAULT, GENERAL_FAULT]);
      await pollUntil(
        () => setup().matter.bridgedDevices(),
        (shown) => shown.filter(({ deviceTypes }) => deviceTypes.includes(MatterDeviceType.OccupancySensor)).every(({ serialNumber, reachable }) => reachable === !CABIN_SERIALS.includes(serialNumber as string)),
        REPORT_TIMEOUT_MS,
        'the cabin\'s doorbells unreachable over Matter, the home\'s reachable',
      );
      expectRunningOnce(homebridge);
    },
    STOP_TIMEOUT_MS + RUN_TIMEOUT_MS + 2 * SUBSCRIBED_TIMEOUT_MS + 2 * REPORT_TIMEOUT_MS + MOTION_TIMEOUT_S * 1000,
  );

  it('logged no Matter or HAP warning, error or stack trace in any run (the plugin\'s own, about the revoked session, are the scenario\'s)', () => {
    const others = setup().sandbox.outputLines.filter((line) => !line.startsWith(`[${PLATFORM_LOG_NAME}] `) || /matter/i.test(line));
    expect(problemLines(others)).toEqual([]);
  });

  itEndsCleanly(setup);
});
