/**
 * The plugin doing its job on real Homebridge 2 and 1 against the strict simulator: it signs in,
 * registers and subscribes three doorbells, reads the account's doorbell list once they are, publishes them as MotionSensors, turns a delivered
 * notification into a MotionDetected event at a paired controller, and after a restart carries on
 * from its stored session.
 */
import { expect, it } from '@jest/globals';
import type { RecordedRequest } from '../../simulator/index.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf, findBySerialNumber, HapCharacteristic, HapService } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { DOORBELLS, MOTION_TIMEOUT_S, SERIAL_NUMBERS } from './support/plugin-config.js';
import { expectNoPortInUse, expectStoppedInTime, itEndsCleanly, NO_FAULT, usePluginSetup, type DoorbellSensor } from './support/plugin-setup.js';

/** Sign-in, registration and three subscriptions take well under a second against the simulator. */
const SUBSCRIBED_TIMEOUT_MS = 10_000;

/** From the simulator's delivery to the controller's MotionDetected event. */
const MOTION_LATENCY_BUDGET_MS = 1_000;

/** Waits this much longer than the budget, so a slow event fails on its measured latency instead. */
const MOTION_EVENT_TIMEOUT_MS = 5 * MOTION_LATENCY_BUDGET_MS;

const MOTION_TIMEOUT_MS = MOTION_TIMEOUT_S * 1000;

/** A duplicate that raised motion would have done so within the latency budget. */
const DUPLICATE_WINDOW_MS = 2 * MOTION_LATENCY_BUDGET_MS;

const RESTART_TIMEOUT_MS = STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS;

const REGISTRATION = 'doorbell PATCH /clients_api/device';
const SUBSCRIPTIONS = SERIAL_NUMBERS.map((deviceId) => `doorbell POST /clients_api/doorbots/${deviceId}/motions_subscribe`);
/** Read once the first subscriptions are done, never before: it must not delay them. */
const LIST_READ = 'doorbell GET /clients_api/ring_devices';

/** The requests the simulator saw, in order, once the doorbell list has been read after the subscriptions. */
async function requestsWithListRead(simulator: { requests: readonly RecordedRequest[] }): Promise<string[]> {
  const lines = await pollUntil(() => requestLines(simulator.requests), (seen) => seen.includes(LIST_READ), SUBSCRIBED_TIMEOUT_MS, 'the doorbell list read', 50);
  expect(lines.indexOf(LIST_READ)).toBeGreaterThan(Math.max(...SUBSCRIPTIONS.map((line) => lines.indexOf(line))));
  return lines;
}

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  const setup = usePluginSetup(runtime);
  let firstRunSensors: DoorbellSensor[];
  /** When each doorbell's MotionDetected event arrived, by serial number. */
  const raisedAt = new Map<string, number>();

  it(
    'signs in once at the regional address, registers once, subscribes each doorbell once, then reads the doorbell list, every request valid',
    async () => {
      await setup().start();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);

      const { simulator } = setup();
      expect((await requestsWithListRead(simulator)).sort()).toEqual(
        ['account POST /api/v1/getUrlByEmail', 'region POST /api/v4/auth/email/login/code', REGISTRATION, ...SUBSCRIPTIONS, LIST_READ].sort(),
      );
      expect(simulator.requestsTo('region')[0]?.rawQuery).toContain('email=e2e%2Bmotion%40example.com');
      expect(simulator.invalidRequests()).toEqual([]);
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it('publishes one MotionSensor per doorbell with its configured name and serial number, and no fault', async () => {
    firstRunSensors = await setup().sensors();

    expect(firstRunSensors.map(({ name, serialNumber }) => ({ name, serialNumber }))).toEqual(
      DOORBELLS.map(({ name, deviceId }) => ({ name, serialNumber: String(deviceId) })),
    );
    // The bridge, the doorbells and the Doorbell Alerts sensor.
    expect(await (await setup().controller()).accessories()).toHaveLength(1 + DOORBELLS.length + 1);
    expect(await setup().statusFaults()).toEqual(DOORBELLS.map(() => NO_FAULT));
  });

  it('raises MotionDetected at the notified doorbell only, within 1 s of the delivery', async () => {
    const { simulator } = setup();
    const controller = await setup().controller();
    await controller.subscribe(...firstRunSensors.map(({ motionDetected }) => motionDetected));

    for (const [index, sensor] of firstRunSensors.entries()) {
      const sentAt = performance.now();
      expect(await simulator.deliverMotion(sensor.serialNumber, { id: eventIdOf(sensor) })).toMatchObject({ status: 202 });
      await controller.nextEvent(changeOf(sensor.motionDetected, true), MOTION_EVENT_TIMEOUT_MS);
      raisedAt.set(sensor.serialNumber, performance.now());

      expect(performance.now() - sentAt).toBeLessThan(MOTION_LATENCY_BUDGET_MS);
      const raisedSoFar = firstRunSensors.map((_, other) => other <= index);
      expect(await controller.read(...firstRunSensors.map(({ motionDetected }) => motionDetected))).toEqual(raisedSoFar);
    }
  });

  it(
    'lets MotionDetected fall back motionTimeout (5 s) after the notification',
    async () => {
      const controller = await setup().controller();
      for (const sensor of firstRunSensors) {
        await controller.nextEvent(changeOf(sensor.motionDetected, false), MOTION_TIMEOUT_MS + MOTION_EVENT_TIMEOUT_MS);
        const heldMs = performance.now() - (raisedAt.get(sensor.serialNumber) as number);
        // Both events reach the controller within the latency budget of the moments they mark.
        expect(heldMs).toBeGreaterThan(MOTION_TIMEOUT_MS - MOTION_LATENCY_BUDGET_MS);
        expect(heldMs).toBeLessThan(MOTION_TIMEOUT_MS + MOTION_LATENCY_BUDGET_MS);
      }
    },
    MOTION_TIMEOUT_MS + MOTION_EVENT_TIMEOUT_MS * DOORBELLS.length,
  );

  it('drops a duplicate notification (same id) without raising MotionDetected, while a new id still does', async () => {
    const { simulator } = setup();
    const controller = await setup().controller();
    const garage = firstRunSensors[2] as DoorbellSensor;

    expect(await simulator.deliverMotion(garage.serialNumber, { id: eventIdOf(garage) })).toMatchObject({ status: 202 });
    await expect(controller.nextEvent(changeOf(garage.motionDetected, true), DUPLICATE_WINDOW_MS)).rejects.toThrow('No matching HAP event');
    expect(await controller.read(garage.motionDetected)).toEqual([false]);

    expect(await simulator.deliverMotion(garage.serialNumber, { id: `${eventIdOf(garage)}-again` })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(garage.motionDetected, true), MOTION_EVENT_TIMEOUT_MS);
  });

  it(
    'after a restart on the same storage: no login, the same push token registered again, every doorbell subscribed again',
    async () => {
      const { simulator } = setup();
      const pushToken = simulator.pushToken;
      expectStoppedInTime(await setup().stop());
      simulator.reset();

      const homebridge = await setup().start();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);

      expect((await requestsWithListRead(simulator)).sort()).toEqual([REGISTRATION, ...SUBSCRIPTIONS, LIST_READ].sort());
      expect(simulator.pushToken).toBe(pushToken);
      expectNoPortInUse(homebridge);
    },
    RESTART_TIMEOUT_MS,
  );

  it('keeps every accessory id (aid and serial number) and the controller pairing across the restart', async () => {
    const idsOf = (sensors: DoorbellSensor[]) => sensors.map(({ aid, serialNumber }) => ({ aid, serialNumber }));

    expect(idsOf(await setup().sensors())).toEqual(idsOf(firstRunSensors));
  });

  it(
    "shows a battery doorbell's level, its low battery and that it is not charged in place, as the doorbell list gives them at launch",
    async () => {
      const { simulator } = setup();
      const front = String(DOORBELLS[0].deviceId);
      simulator.setDoorbellHealth(front, { battery_life: '15.4' });
      expectStoppedInTime(await setup().stop());
      await setup().start();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
      const controller = await setup().controller();

      const accessory = await pollUntil(
        async () => findBySerialNumber(await controller.accessories(), front),
        (found) => found.service(HapService.Battery) !== undefined,
        SUBSCRIBED_TIMEOUT_MS,
        "Front Door's Battery service",
      );
      const battery = [HapCharacteristic.BatteryLevel, HapCharacteristic.StatusLowBattery, HapCharacteristic.ChargingState].map((type) => accessory.characteristic(HapService.Battery, type));
      // 15 %, BATTERY_LEVEL_LOW, NOT_CHARGEABLE.
      expect(await controller.read(...battery)).toEqual([15, 1, 2]);
      expect(accessory.namesOf(HapService.Battery)).toEqual(['Front Door Battery']);
    },
    RESTART_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  itEndsCleanly(setup);
});

/** Each doorbell's first notification id: the duplicate check sends one again. */
function eventIdOf({ serialNumber }: DoorbellSensor): string {
  return `motion-${serialNumber}`;
}

/** "service METHOD path" per request: which server got what, with no detail that varies by run. */
function requestLines(requests: readonly RecordedRequest[]): string[] {
  return requests.map(({ service, method, path }) => `${service} ${method} ${path}`);
}
