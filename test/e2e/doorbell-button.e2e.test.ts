/**
 * The doorbell beyond motion, on real Homebridge 2 and 1 through a paired HomeKit controller: a ring
 * presses the doorbell button, the service's own payload is understood, a doorbell whose subscription
 * keeps failing does not hold back the others, and a restart with a config mistake leaves no stale
 * motion behind.
 */
import { expect, it } from '@jest/globals';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf, HapCharacteristic, HapService } from './support/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from './support/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from './support/homebridge-versions.js';
import { doorbellMotionPlatform, pluginLogLine } from './support/plugin-config.js';
import { GENERAL_FAULT, itEndsCleanly, NO_FAULT, useRig, type DoorbellSensor } from './support/plugin-rig.js';

const SUBSCRIBED_TIMEOUT_MS = 10_000;
const EVENT_TIMEOUT_MS = 5_000;
const SINGLE_PRESS = 0;

/** Long enough that motion raised before a restart is still on when Homebridge comes back. */
const LONG_MOTION_S = 600;

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  const rig = useRig(runtime, async ({ sandbox, simulator, endpoints }) => {
    await sandbox.writeConfig([doorbellMotionPlatform(endpoints, { motionTimeout: LONG_MOTION_S })]);
    // The garage's subscription answers 503 every time: its retries take many seconds.
    simulator.injectFault('subscribe', { status: 503, deviceId: '9007199254740993', times: 1_000 });
  });
  let sensors: DoorbellSensor[];

  it(
    'clears the fault of each doorbell whose subscription succeeded while the garage keeps failing',
    async () => {
      await rig().start();
      sensors = await rig().sensors();
      const [front, back, garage] = sensors;
      await rig().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS, [front, back]);

      expect(await rig().statusFaults([garage])).toEqual([GENERAL_FAULT]);
      rig().simulator.clearFaults();
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it('presses the doorbell button at a ring: SINGLE_PRESS on the Doorbell and the switch, motion untouched', async () => {
    const controller = await rig().controller();
    const front = await controller.accessoryWithSerialNumber(sensors[0].serialNumber);
    const presses = [HapService.Doorbell, HapService.StatelessProgrammableSwitch].map((service) =>
      front.characteristic(service, HapCharacteristic.ProgrammableSwitchEvent),
    );
    // Once for the whole rig: hap-controller loses its event stream when asked to subscribe twice.
    await controller.subscribe(...presses, ...sensors.map(({ motionDetected }) => motionDetected));

    expect(await rig().simulator.deliverMotion(sensors[0].serialNumber, { kind: 'ding', id: 'ring-1' })).toMatchObject({ status: 202 });
    for (const press of presses) {
      await controller.nextEvent(changeOf(press, SINGLE_PRESS), EVENT_TIMEOUT_MS);
    }
    expect(await controller.read(sensors[0].motionDetected)).toEqual([false]);
  });

  it("raises MotionDetected for the service's own payload of a person detection", async () => {
    const controller = await rig().controller();
    const back = sensors[1];
    const payload = {
      android_config: { category: 'com.ring.pn.live-event.motion' },
      data: { device: { id: Number(back.serialNumber) }, event: { ding: { id: '6975233002112450000', subtype: 'human' } } },
    };

    expect(await rig().simulator.deliverMotion(back.serialNumber, { rawBody: JSON.stringify(payload) })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(back.motionDetected, true), EVENT_TIMEOUT_MS);
  });

  it(
    'after a restart with a config mistake, shows no motion and a fault on every doorbell',
    async () => {
      await rig().stop();
      await rig().sandbox.writeConfig([doorbellMotionPlatform(rig().endpoints, { motionTimeout: LONG_MOTION_S, doorbellServerUrl: 'not a url' })]);

      const homebridge = await rig().start();
      await homebridge.waitForLine(pluginLogLine('Configuration: doorbellServerUrl must be'), 0);

      const controller = await rig().controller();
      expect(await controller.read(...sensors.map(({ motionDetected }) => motionDetected))).toEqual([false, false, false]);
      expect(await rig().statusFaults(sensors)).toEqual([GENERAL_FAULT, GENERAL_FAULT, GENERAL_FAULT]);
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS,
  );

  itEndsCleanly(rig);
});
