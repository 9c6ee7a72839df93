/**
 * The doorbell beyond motion, on real Homebridge 2 and 1 through a paired HomeKit controller: a ring
 * presses the doorbell button (single presses only, the motion sensor staying the primary service),
 * the service's own payload is understood, a doorbell whose subscription keeps failing does not hold
 * back the others, turning a button off removes it for good but keeps the accessory, and a restart
 * with a config mistake leaves no stale motion behind. The doorbells have names HomeKit does not
 * accept as they are: the controller reads them cleaned, and HAP-NodeJS never warns of a name.
 */
import { expect, it } from '@jest/globals';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf, findBySerialNumber, HapCharacteristic, HapService } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { DOORBELLS, doorbellMotionPlatform, pluginLogLine } from './support/plugin-config.js';
import { GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup, type DoorbellSensor } from './support/plugin-setup.js';

const SUBSCRIBED_TIMEOUT_MS = 10_000;
const EVENT_TIMEOUT_MS = 5_000;
const SINGLE_PRESS = 0;
const BUTTON_SERVICES = [HapService.Doorbell, HapService.StatelessProgrammableSwitch];

/** Long enough that motion raised before a restart is still on when Homebridge comes back. */
const LONG_MOTION_S = 600;

/** A bracket, an emoji and a name of 100 characters, past HomeKit's 64, and what HomeKit shows of each. */
const ODD_NAMES = ['Front Door (Main)', '🚪 Porch', 'Garage and Side Entrance of the Old Barn, by the Apple Tree (West Wing) and the Blue Shed, Door 2 ⚠️'];
const CLEANED_NAMES = ['Front Door Main', 'Porch', 'Garage and Side Entrance of the Old Barn, by the Apple Tree (Wes'];
const NAMED_DOORBELLS = DOORBELLS.map((doorbell, index) => ({ ...doorbell, name: ODD_NAMES[index] }));

/**
 * HAP-NodeJS's warnings about a name: its own check's (console), and a characteristic's value too
 * long, which Homebridge logs as a warning from the characteristic 'Name' or 'Configured Name'.
 */
const HAP_NAME_WARNING = /HAP-NodeJS WARNING.*'Name'|warning from the characteristic '(Configured )?Name'|exceeded max length/;

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES)('$label', (runtime) => {
  const setup = usePluginSetup(runtime, async ({ sandbox, simulator, endpoints }) => {
    await sandbox.writeConfig([doorbellMotionPlatform(endpoints, { motionTimeout: LONG_MOTION_S, doorbells: NAMED_DOORBELLS })]);
    // The garage's subscription answers 503 every time: its retries take many seconds.
    simulator.injectFault('subscribe', { status: 503, deviceId: '9007199254740993', times: 1_000 });
  });
  let sensors: DoorbellSensor[];

  it(
    'clears the fault of each doorbell whose subscription succeeded while the garage keeps failing',
    async () => {
      await setup().start();
      sensors = await setup().sensors();
      const [front, back, garage] = sensors;
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS, [front, back]);

      expect(await setup().statusFaults([garage])).toEqual([GENERAL_FAULT]);
      setup().simulator.clearFaults();
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it('shows each doorbell under its cleaned name: the accessory, the motion sensor (Name and ConfiguredName) and the doorbell', async () => {
    const accessories = await (await setup().controller()).accessories();
    const names = sensors.map(({ serialNumber }) => {
      const accessory = findBySerialNumber(accessories, serialNumber);
      return [
        accessory.name,
        accessory.valueOf(HapService.MotionSensor, HapCharacteristic.Name),
        accessory.valueOf(HapService.MotionSensor, HapCharacteristic.ConfiguredName),
        accessory.valueOf(HapService.Doorbell, HapCharacteristic.Name),
      ];
    });

    expect(names).toEqual(CLEANED_NAMES.map((name) => [name, name, name, name]));
    const told = setup().homebridge.lines.filter((line) => pluginLogLine('is called ".*" in HomeKit').test(line));
    expect(told).toHaveLength(3);
    expect(told[0]).toContain('Doorbell 1234567 "Front Door (Main)" is called "Front Door Main" in HomeKit');
  });

  it('offers only SINGLE_PRESS on the Doorbell and the switch of each doorbell, and keeps the motion sensor primary', async () => {
    const accessories = await (await setup().controller()).accessories();
    for (const accessory of sensors.map(({ serialNumber }) => findBySerialNumber(accessories, serialNumber))) {
      expect(accessory.services.filter(({ primary }) => primary === true).map(({ type }) => type)).toEqual([HapService.MotionSensor]);
      const validValues = BUTTON_SERVICES.map((service) => accessory.findCharacteristic(service, HapCharacteristic.ProgrammableSwitchEvent)?.['valid-values']);
      expect(validValues).toEqual([[SINGLE_PRESS], [SINGLE_PRESS]]);
    }
  });

  it('presses the doorbell button at a ring: SINGLE_PRESS on the Doorbell and the switch, motion untouched', async () => {
    const controller = await setup().controller();
    const front = await controller.accessoryWithSerialNumber(sensors[0].serialNumber);
    const presses = [HapService.Doorbell, HapService.StatelessProgrammableSwitch].map((service) =>
      front.characteristic(service, HapCharacteristic.ProgrammableSwitchEvent),
    );
    // Once for the whole setup: hap-controller loses its event stream when asked to subscribe twice.
    await controller.subscribe(...presses, ...sensors.map(({ motionDetected }) => motionDetected));

    expect(await setup().simulator.deliverMotion(sensors[0].serialNumber, { kind: 'ding', id: 'ring-1' })).toMatchObject({ status: 202 });
    for (const press of presses) {
      await controller.nextEvent(changeOf(press, SINGLE_PRESS), EVENT_TIMEOUT_MS);
    }
    expect(await controller.read(sensors[0].motionDetected)).toEqual([false]);
  });

  it("raises MotionDetected for the service's own payload of a person detection", async () => {
    const controller = await setup().controller();
    const back = sensors[1];
    const payload = {
      android_config: { category: 'com.ring.pn.live-event.motion' },
      data: { device: { id: Number(back.serialNumber) }, event: { ding: { id: '6975233002112450000', subtype: 'human' } } },
    };

    expect(await setup().simulator.deliverMotion(back.serialNumber, { rawBody: JSON.stringify(payload) })).toMatchObject({ status: 202 });
    await controller.nextEvent(changeOf(back.motionDetected, true), EVENT_TIMEOUT_MS);
  });

  it(
    'after a restart with the front door\'s button turned off: no Doorbell or switch there, the same accessory, its motion sensor working',
    async () => {
      await setup().stop();
      const doorbells = NAMED_DOORBELLS.map((doorbell, index) => (index === 0 ? { ...doorbell, button: false } : doorbell));
      await setup().sandbox.writeConfig([doorbellMotionPlatform(setup().endpoints, { motionTimeout: LONG_MOTION_S, doorbells })]);
      await setup().start();
      const [front] = sensors;

      const controller = await setup().controller();
      const accessory = await controller.accessoryWithSerialNumber(front.serialNumber);
      expect([accessory.aid, BUTTON_SERVICES.map((service) => accessory.service(service))]).toEqual([front.aid, [undefined, undefined]]);
      expect((await controller.accessoryWithSerialNumber(sensors[1].serialNumber)).service(HapService.Doorbell)).toBeDefined();
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS, [front]);
      expect(await setup().simulator.deliverMotion(front.serialNumber, { id: 'after-button-off' })).toMatchObject({ status: 202 });
      await pollUntil(() => controller.read(front.motionDetected), ([motion]) => motion === true, EVENT_TIMEOUT_MS, 'MotionDetected on the front door');
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS + EVENT_TIMEOUT_MS,
  );

  it(
    'after a restart with a config mistake, shows no motion and a fault on every doorbell, the button still gone from the cache',
    async () => {
      await setup().stop();
      await setup().sandbox.writeConfig([
        doorbellMotionPlatform(setup().endpoints, { motionTimeout: LONG_MOTION_S, doorbells: NAMED_DOORBELLS, doorbellServerUrl: 'not a url' }),
      ]);

      const homebridge = await setup().start();
      await homebridge.waitForLine(pluginLogLine('Configuration: doorbellServerUrl must be'), 0);

      const controller = await setup().controller();
      expect(await controller.read(...sensors.map(({ motionDetected }) => motionDetected))).toEqual([false, false, false]);
      expect(await setup().statusFaults(sensors)).toEqual([GENERAL_FAULT, GENERAL_FAULT, GENERAL_FAULT]);
      // A config the plugin cannot use leaves the services as Homebridge cached them: the removal was saved.
      const front = await controller.accessoryWithSerialNumber(sensors[0].serialNumber);
      expect([front.aid, BUTTON_SERVICES.map((service) => front.service(service))]).toEqual([sensors[0].aid, [undefined, undefined]]);
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS,
  );

  it('got no warning from HAP-NodeJS about a name in any run, from the cache or from the plugin', () => {
    expect(setup().sandbox.outputLines.filter((line) => HAP_NAME_WARNING.test(line))).toEqual([]);
    expect(setup().sandbox.outputLines.filter((line) => /HAP-NodeJS WARNING/.test(line))).toEqual([]);
  });

  itEndsCleanly(setup);
});
