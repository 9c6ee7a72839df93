/**
 * The controls in the Home app on a real Homebridge, through a paired HomeKit controller: the
 * front door carries the Motion Alerts and Chime switches and a person, a vehicle, a package and an
 * animal sensor. The controller turns Motion Alerts off and the front door's sensors stay off while the
 * back door still fires; it turns the Chime off and a ring presses only the programmable switch; a
 * person fires the person sensor, not the vehicle one; a package delivered fires the package sensor and
 * an animal the animal one. After a restart, Motion Alerts (no minutes set) reads what it was left at,
 * and the Chime, whose 30 minutes off ran out while Homebridge was down, is on again.
 */
import { expect, it } from '@jest/globals';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf, HapCharacteristic, HapService, type CharacteristicEvent, type CharacteristicRef, type HapAccessory } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { DOORBELLS, doorbellMotionPlatform } from './support/plugin-config.js';
import { itEndsCleanly, NO_FAULT, usePluginSetup } from './support/plugin-setup.js';

const SUBSCRIBED_TIMEOUT_MS = 10_000;
const EVENT_TIMEOUT_MS = 5_000;
/** An event that was going to come would have come by now: deliveries take milliseconds on loopback. */
const QUIET_MS = 1_500;
const SINGLE_PRESS = 0;

const [FRONT, BACK] = DOORBELLS.map(({ deviceId }) => String(deviceId));
const WITH_CONTROLS = DOORBELLS.map((doorbell, index) =>
  index === 0
    ? { ...doorbell, motionSwitch: true, chimeSwitch: true, chimeSwitchMinutes: 30, detections: ['person', 'vehicle', 'package', 'animal'] }
    : index === 1
      ? { ...doorbell, detections: ['person'] }
      : doorbell,
);

/** The service's own payload of a motion at the doorbell that saw what `subtype` names. */
function motionAt(deviceId: string, eventId: string, subtype: string): string {
  return `{"android_config":{"category":"com.ring.pn.live-event.motion"},"data":{"device":{"id":${deviceId}},"event":{"ding":{"id":"${eventId}","subtype":"${subtype}"}}}}`;
}

/** The service's own payload of a person seen at the doorbell. */
function personAt(deviceId: string, eventId: string): string {
  return motionAt(deviceId, eventId, 'human');
}

/** What the controller reads and subscribes to on one doorbell. */
function frontDoor(accessory: HapAccessory) {
  const motion = (name: string) => accessory.characteristic(HapService.MotionSensor, HapCharacteristic.MotionDetected, name);
  const on = (name: string) => accessory.characteristic(HapService.Switch, HapCharacteristic.On, name);
  const press = (service: string) => accessory.characteristic(service, HapCharacteristic.ProgrammableSwitchEvent);
  return {
    sensors: [motion('Front Door'), motion('Front Door Person'), motion('Front Door Vehicle'), motion('Front Door Package'), motion('Front Door Animal')],
    motionAlerts: on('Front Door Motion Alerts'),
    chime: on('Front Door Chime'),
    doorbellPress: press(HapService.Doorbell),
    switchPress: press(HapService.StatelessProgrammableSwitch),
  };
}

/** HAP-NodeJS warns of a name it rejects, or of a characteristic a service does not declare. */
function expectNoHapWarning(lines: readonly string[]): void {
  expect(lines.filter((line) => /HAP-NodeJS WARNING|generated a warning/i.test(line))).toEqual([]);
}

/**
 * Homebridge down for `minutes`, as its accessory cache sees it: every switch's kept end of its time
 * off comes that much sooner. The plugin reads the cache Homebridge wrote at shutdown, as after a
 * real wait, without the test waiting half an hour.
 */
async function downFor(storagePath: string, minutes: number): Promise<void> {
  const file = join(storagePath, 'accessories', 'cachedAccessories');
  const cached = JSON.parse(await readFile(file, 'utf8')) as Array<{ context: Record<string, unknown> }>;
  for (const { context } of cached) {
    for (const key of Object.keys(context).filter((name) => name.endsWith('OffUntil'))) {
      context[key] = (context[key] as number) - minutes * 60_000;
    }
  }
  await writeFile(file, JSON.stringify(cached));
}

function isOf(characteristic: CharacteristicRef): (event: CharacteristicEvent) => boolean {
  return (event) => event.aid === characteristic.aid && event.iid === characteristic.iid;
}

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  const setup = usePluginSetup(runtime, ({ sandbox, endpoints }) => sandbox.writeConfig([doorbellMotionPlatform(endpoints, { doorbells: WITH_CONTROLS })]));
  let front: ReturnType<typeof frontDoor>;
  let backMotion: CharacteristicRef;

  it(
    'shows the switches and detection sensors by name, both switches on, the main motion sensor primary',
    async () => {
      await setup().start();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
      const controller = await setup().controller();
      const accessory = await controller.accessoryWithSerialNumber(FRONT);
      front = frontDoor(accessory);
      backMotion = (await controller.accessoryWithSerialNumber(BACK)).characteristic(HapService.MotionSensor, HapCharacteristic.MotionDetected, 'Back Door');

      expect(accessory.namesOf(HapService.MotionSensor)).toEqual(['Front Door', 'Front Door Person', 'Front Door Vehicle', 'Front Door Package', 'Front Door Animal']);
      expect(accessory.namesOf(HapService.Switch).sort()).toEqual(['Front Door Chime', 'Front Door Motion Alerts']);
      expect(accessory.services.filter(({ primary }) => primary === true).map((service) => service.characteristics.find(({ type }) => type === HapCharacteristic.Name)?.value)).toEqual([
        'Front Door',
      ]);
      expect(await controller.read(front.motionAlerts, front.chime)).toEqual([true, true]);
      expectNoHapWarning(setup().homebridge.lines);
      // Once for the whole setup: hap-controller loses its event stream when asked to subscribe twice.
      await controller.subscribe(...front.sensors, front.motionAlerts, front.chime, front.doorbellPress, front.switchPress, backMotion);
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it('fires the person sensor and the main one for a person, and not the vehicle sensor', async () => {
    const controller = await setup().controller();
    const [main, person, vehicle, parcel, animal] = front.sensors;

    expect(await setup().simulator.deliverMotion(FRONT, { rawBody: personAt(FRONT, 'person-1') })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(person, true), EVENT_TIMEOUT_MS);
    expect(await controller.read(main, person, vehicle, parcel, animal)).toEqual([true, true, false, false, false]);
  });

  it('fires the package sensor for a package delivered and the animal sensor for an animal, never the vehicle sensor', async () => {
    const controller = await setup().controller();
    const [, , vehicle, parcel, animal] = front.sensors;

    expect(await setup().simulator.deliverMotion(FRONT, { rawBody: motionAt(FRONT, 'package-1', 'package_delivery') })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(parcel, true), EVENT_TIMEOUT_MS);
    // Only sensors no alert has turned on are read: those that were on may have timed out since.
    expect(await controller.read(vehicle, animal)).toEqual([false, false]);

    expect(await setup().simulator.deliverMotion(FRONT, { rawBody: motionAt(FRONT, 'animal-1', 'animal') })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(animal, true), EVENT_TIMEOUT_MS);
    expect(await controller.read(vehicle)).toEqual([false]);
  });

  it('with Motion Alerts turned off by the controller: the front door\'s sensors off at once and after a motion, the back door still firing', async () => {
    const controller = await setup().controller();
    const [main] = front.sensors;

    await controller.write(front.motionAlerts, false);
    await controller.nextEvent(changeOf(main, false), EVENT_TIMEOUT_MS);
    expect(await controller.read(...front.sensors)).toEqual([false, false, false, false, false]);

    expect(await setup().simulator.deliverMotion(FRONT, { rawBody: personAt(FRONT, 'person-2') })).toMatchObject({ status: 202 });
    expect(await setup().simulator.deliverMotion(BACK, { rawBody: personAt(BACK, 'person-3') })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(backMotion, true), EVENT_TIMEOUT_MS);
    await expect(controller.nextEvent((event) => front.sensors.some((sensor) => isOf(sensor)(event)), QUIET_MS)).rejects.toThrow('No matching HAP event');
    expect(await controller.read(...front.sensors, front.motionAlerts)).toEqual([false, false, false, false, false, false]);
  });

  it('with the Chime turned off by the controller, a ring fires the programmable switch and not the Doorbell service', async () => {
    const controller = await setup().controller();
    // HAP lets a controller write a bool as 0 or 1.
    await controller.write(front.chime, 0);
    await setup().homebridge.waitForLine(/The chime at Front Door turned off until \d\d:\d\d/, EVENT_TIMEOUT_MS);

    expect(await setup().simulator.deliverMotion(FRONT, { kind: 'ding', id: 'ring-silent' })).toMatchObject({ status: 202 });
    const first = await controller.nextEvent((event) => isOf(front.doorbellPress)(event) || isOf(front.switchPress)(event), EVENT_TIMEOUT_MS);
    expect(first).toMatchObject({ aid: front.switchPress.aid, iid: front.switchPress.iid, value: SINGLE_PRESS });
    await expect(controller.nextEvent(isOf(front.doorbellPress), QUIET_MS)).rejects.toThrow('No matching HAP event');
  });

  it(
    'after a restart, motion alerts stay off until turned on, and the Chime whose time ran out meanwhile is on again',
    async () => {
      await setup().stop();
      await downFor(setup().sandbox.storagePath, 31);
      await setup().start();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
      const controller = await setup().controller();

      expect(await controller.read(front.motionAlerts, front.chime)).toEqual([false, true]);
      await setup().homebridge.waitForLine(/Front Door Chime is on again/, EVENT_TIMEOUT_MS);
      expectNoHapWarning(setup().homebridge.lines);
      expect(await setup().simulator.deliverMotion(FRONT, { id: 'after-restart' })).toMatchObject({ status: 202 });
      expect(await controller.read(front.sensors[0])).toEqual([false]);

      await controller.write(front.motionAlerts, true);
      expect(await setup().simulator.deliverMotion(FRONT, { id: 'alerts-on-again' })).toMatchObject({ status: 202 });
      expect(await controller.read(front.motionAlerts, front.sensors[0])).toEqual([true, true]);
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  itEndsCleanly(setup);
});
