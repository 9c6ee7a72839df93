/**
 * The controls in the Home app through the whole platform, on real HAP objects and real deliveries
 * from the simulator: the Motion Alerts switch silences one doorbell's motion and nothing else, the
 * Chime switch leaves a ring to automations, and a detection reaches its own sensor in every shape of
 * notification. Switch changes and ignored alerts are logged; so are config entries that do nothing.
 */
import { describe, expect, it } from '@jest/globals';
import type { Service } from 'homebridge';
import { MIN_RING_INTERVAL_MS } from '../src/accessories/doorbell-accessory.js';
import { recordPresses } from './support/hap-changes.js';
import { hap } from '../scripts/lib/hap.js';
import { accessoryOf, DOORBELLS, FAST, waitFor, type RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from './support/platform-testbed.js';
import { SHAPE_NAMES, SHAPES } from './support/notification-payloads.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);
const { Characteristic, Service: S } = hap;
const SINGLE_PRESS = Characteristic.ProgrammableSwitchEvent.SINGLE_PRESS;
const SENSORS = [undefined, 'person', 'vehicle', 'package', 'animal', 'other'] as const;

/** Both doorbells with every control: the front door's alerts are the ones switched. */
const WITH_CONTROLS = DOORBELLS.map((doorbell) => ({ ...doorbell, motionSwitch: true, chimeSwitch: true, detections: ['person', 'vehicle', 'package', 'animal', 'other'] }));

function serviceOf(platform: RunningPlatform, deviceId: string, type: typeof S.Switch | typeof S.MotionSensor, subtype?: string): Service {
  const service = accessoryOf(platform, deviceId).services.find((candidate) => candidate.UUID === type.UUID && candidate.subtype === subtype);
  if (service === undefined) {
    throw new Error(`doorbell ${deviceId} has no ${type.name} ${String(subtype)}`);
  }
  return service;
}

/** MotionDetected of the main sensor and the person, vehicle, package, animal and other sensors, in that order. */
function motionOf(platform: RunningPlatform, deviceId: string): unknown[] {
  return SENSORS.map((subtype) => serviceOf(platform, deviceId, S.MotionSensor, subtype).getCharacteristic(Characteristic.MotionDetected).value);
}

/** A controller's write of the switch's On. */
async function turn(platform: RunningPlatform, deviceId: string, control: 'motion-alerts' | 'chime', on: boolean): Promise<void> {
  await serviceOf(platform, deviceId, S.Switch, control).getCharacteristic(Characteristic.On).handleSetRequest(on);
}

describe('the controls in the Home app', () => {
  const testbed = usePlatformTestbed();

  async function launched(timing = FAST): Promise<RunningPlatform> {
    const platform = testbed.launch({ doorbells: WITH_CONTROLS, timing });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    return platform;
  }

  it('with Motion Alerts off, leaves every sensor of that doorbell off while the other doorbell fires, and rings still press', async () => {
    const platform = await launched();
    await testbed.sim.deliverMotion(FRONT, { subtype: 'human' });
    expect(motionOf(platform, FRONT)).toEqual([true, true, false, false, false, false]);

    await turn(platform, FRONT, 'motion-alerts', false);
    expect(motionOf(platform, FRONT)).toEqual([false, false, false, false, false, false]);
    const presses = recordPresses(accessoryOf(platform, FRONT));

    expect((await testbed.sim.deliverMotion(FRONT, { subtype: 'human' })).status).toBe(202);
    expect((await testbed.sim.deliverMotion(BACK, { subtype: 'human' })).status).toBe(202);
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding' })).status).toBe(202);

    expect(motionOf(platform, FRONT)).toEqual([false, false, false, false, false, false]);
    expect(motionOf(platform, BACK)).toEqual([true, true, false, false, false, false]);
    expect(presses).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS] });
    expect(platform.log.lines).toContainEqual({ level: 'info', message: 'Motion alerts at Front Door turned off' });
    expect(platform.log.lines).toContainEqual({ level: 'debug', message: 'Ignored motion at Front Door: its Motion Alerts switch is off' });
    expect(platform.log.lines.filter(({ message }) => message.startsWith('Motion at'))).toEqual([
      { level: 'info', message: 'Motion at Front Door (person)' },
      { level: 'info', message: 'Motion at Back Door (person)' },
    ]);
  });

  it('with Chime off, lets a ring fire the programmable switch and not the Doorbell service', async () => {
    // The rings' clock, moved on past the 5 s between two presses of a doorbell.
    let monotonic = 0;
    const platform = await launched({ ...FAST, monotonicNow: () => monotonic });
    const presses = recordPresses(accessoryOf(platform, FRONT));
    await turn(platform, FRONT, 'chime', false);

    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding' })).status).toBe(202);
    expect(presses).toEqual({ doorbell: [], switch: [SINGLE_PRESS] });
    expect(platform.log.lines).toContainEqual({ level: 'info', message: 'The chime at Front Door turned off' });
    expect(platform.log.lines).toContainEqual({ level: 'info', message: 'Doorbell rang at Front Door (Chime off: automations only)' });

    await turn(platform, FRONT, 'chime', true);
    monotonic += MIN_RING_INTERVAL_MS;
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding' })).status).toBe(202);
    expect(presses).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS, SINGLE_PRESS] });
  });

  it.each(SHAPE_NAMES)('turns on the vehicle sensor, and not the person one, for a vehicle in the %s shape', async (shape) => {
    const platform = await launched();
    const body = SHAPES[shape]({ deviceId: BACK, kind: 'motion', subtype: '"vehicle"' });
    expect((await testbed.sim.deliverMotion(BACK, { rawBody: body })).status).toBe(202);
    expect(motionOf(platform, BACK)).toEqual([true, false, true, false, false, false]);
    expect(motionOf(platform, FRONT)).toEqual([false, false, false, false, false, false]);
  });

  it.each([
    ['package_delivery', 'Back Door Package', 'package'],
    ['package_pickup', 'Back Door Package', 'package'],
    ['animal', 'Back Door Animal', 'animal'],
  ])('for a motion of subtype %s through the receiver, turns on the main sensor and %s, and no other', async (subtype, name, detection) => {
    const platform = await launched();
    expect((await testbed.sim.deliverMotion(BACK, { subtype })).status).toBe(202);

    const on = accessoryOf(platform, BACK)
      .services.filter((service) => service.UUID === S.MotionSensor.UUID && service.getCharacteristic(Characteristic.MotionDetected).value === true)
      .map((service) => service.getCharacteristic(Characteristic.Name).value);
    expect(on).toEqual(['Back Door', name]);
    expect(motionOf(platform, FRONT)).toEqual([false, false, false, false, false, false]);
    expect(logged(platform, `Motion at Back Door (${detection})`)).toBe(true);
  });

  it('keeps a switch turned off across a restart, and a doorbell without the option loses the switch, not its accessory', async () => {
    const first = await launched();
    await turn(first, FRONT, 'motion-alerts', false);
    await turn(first, BACK, 'chime', false);
    await testbed.stop(first);

    const second = testbed.launch({ doorbells: [WITH_CONTROLS[0], { ...WITH_CONTROLS[1], chimeSwitch: false }], cached: first.test.registered });
    await waitFor(() => allConfirmed(second), 'subscriptions');
    const onOf = (deviceId: string, control: string) => serviceOf(second, deviceId, S.Switch, control).getCharacteristic(Characteristic.On).handleGetRequest();
    expect(await Promise.all([onOf(FRONT, 'motion-alerts'), onOf(FRONT, 'chime'), onOf(BACK, 'motion-alerts')])).toEqual([false, true, true]);
    expect(accessoryOf(second, BACK).services.filter(({ subtype }) => subtype === 'chime')).toEqual([]);
    expect(accessoryOf(second, BACK).UUID).toBe(accessoryOf(first, BACK).UUID);

    await testbed.sim.deliverMotion(FRONT);
    const backPresses = recordPresses(accessoryOf(second, BACK));
    await testbed.sim.deliverMotion(BACK, { kind: 'ding' });
    expect(motionOf(second, FRONT)).toEqual([false, false, false, false, false, false]);
    expect(backPresses).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS] });
  });

  it('warns of a repeated detection and of a Chime switch without a button, and the doorbells still work', async () => {
    const doorbells = [
      { ...DOORBELLS[0], detections: ['person', 'person'] },
      { ...DOORBELLS[1], button: false, chimeSwitch: true },
    ];
    const platform = testbed.launch({ doorbells });
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    expect(platform.log.lines.filter(({ level, message }) => level === 'error' || message.startsWith('Configuration:'))).toEqual([
      { level: 'warn', message: 'Configuration: doorbells[0].detections[1] repeats doorbells[0].detections[0]: each detection gets one motion sensor, so it is ignored' },
      {
        level: 'warn',
        message: 'Configuration: doorbells[1].chimeSwitch is ignored: with doorbells[1].button false there is no ring to chime, so no Chime switch is added',
      },
    ]);
    expect(accessoryOf(platform, FRONT).services.filter(({ subtype }) => subtype === 'person')).toHaveLength(1);
    expect(accessoryOf(platform, BACK).services.filter(({ UUID }) => UUID === S.Switch.UUID)).toEqual([]);
    await testbed.sim.deliverMotion(FRONT, { subtype: 'human' });
    expect(logged(platform, 'Motion at Front Door (person)')).toBe(true);
  });

  it('shows no motion and a fault on every sensor, detections included, after a restart with a config mistake', async () => {
    const first = testbed.launch({ doorbells: WITH_CONTROLS, overrides: { motionTimeout: 600 } });
    await waitFor(() => allConfirmed(first), 'subscriptions');
    await testbed.sim.deliverMotion(FRONT, { subtype: 'other_motion' });
    expect(motionOf(first, FRONT)).toEqual([true, false, false, false, false, true]);
    await testbed.stop(first);

    const second = testbed.launch({ doorbells: WITH_CONTROLS, overrides: { doorbellServerUrl: 'not a url' }, cached: first.test.registered });
    const faultOf = (subtype?: string) => serviceOf(second, FRONT, S.MotionSensor, subtype).getCharacteristic(Characteristic.StatusFault).value;
    expect(motionOf(second, FRONT)).toEqual([false, false, false, false, false, false]);
    expect(SENSORS.map(faultOf)).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
