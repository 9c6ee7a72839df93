/**
 * The doorbell's controls in the Home app, on real HAP services and characteristics: the Motion Alerts
 * and Chime switches (found by subtype, kept across restarts in the accessory's context) and the
 * per-detection motion sensors. Writes go through HAP's own set handling, as a controller's do.
 */
import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { PlatformAccessory, Service } from 'homebridge';
import { accessoryUuid, DoorbellAccessory, MIN_RING_INTERVAL_MS, type DoorbellChange } from '../../src/accessories/doorbell-accessory.js';
import { cleanName, isHomeKitName } from '../../src/accessories/names.js';
import type { DoorbellSettings } from '../../src/config/parse-config.js';
import { recordPresses } from '../support/hap-changes.js';
import { createTestApi, reloadFromCache } from '../../scripts/lib/homebridge-api.js';
import { doorbellSettings } from '../../scripts/lib/platform-harness.js';

const test = createTestApi({ storagePath: tmpdir() });
const { api } = test;
const { Characteristic: C, Service: S } = api.hap;
const SINGLE_PRESS = C.ProgrammableSwitchEvent.SINGLE_PRESS;

const PLAIN = doorbellSettings({ deviceId: '1234567', name: 'Front Door', motionTimeout: 30 });
const ALL: DoorbellSettings = { ...PLAIN, motionSwitch: true, chimeSwitch: true, detections: ['person', 'vehicle', 'package', 'animal', 'other'] };

/** The main sensor, then each detection's, in the order the accessory adds them. */
const SENSORS = [undefined, 'person', 'vehicle', 'package', 'animal', 'other'];

function newAccessory(): PlatformAccessory {
  return new api.platformAccessory(PLAIN.name, accessoryUuid(api, PLAIN.deviceId));
}

/** The service of this type and subtype, as the plugin must find it: never by type alone. */
function serviceOf(accessory: PlatformAccessory, type: typeof S.Switch | typeof S.MotionSensor, subtype?: string): Service {
  const found = accessory.services.filter((service) => service.UUID === type.UUID && service.subtype === subtype);
  if (found.length !== 1) {
    throw new Error(`expected one ${type.name} with subtype ${String(subtype)}, found ${found.length}`);
  }
  return found[0];
}

const switchOf = (accessory: PlatformAccessory, subtype: 'motion-alerts' | 'chime') => serviceOf(accessory, S.Switch, subtype).getCharacteristic(C.On);
const motionOf = (accessory: PlatformAccessory, subtype?: string) => serviceOf(accessory, S.MotionSensor, subtype).getCharacteristic(C.MotionDetected);

/** What a controller reads (through onGet) and what HAP last pushed. */
async function readBoth(characteristic: ReturnType<typeof switchOf>): Promise<unknown[]> {
  return [await characteristic.handleGetRequest(), characteristic.value];
}

/** A controller writing the switch, through HAP's set handling and the plugin's onSet. */
async function write(accessory: PlatformAccessory, subtype: 'motion-alerts' | 'chime', on: boolean): Promise<void> {
  await switchOf(accessory, subtype).handleSetRequest(on);
}

function subtypesOf(accessory: PlatformAccessory, type: typeof S.Switch | typeof S.MotionSensor): Array<string | undefined> {
  return accessory.services.filter((service) => service.UUID === type.UUID).map((service) => service.subtype);
}

function namesOf(service: Service): unknown[] {
  return [service.getCharacteristic(C.Name).value, service.getCharacteristic(C.ConfiguredName).value];
}

let doorbells: DoorbellAccessory[];

function create(accessory: PlatformAccessory, settings: DoorbellSettings = ALL): DoorbellAccessory {
  const doorbell = new DoorbellAccessory(api, accessory, settings);
  doorbells.push(doorbell);
  return doorbell;
}

beforeEach(() => {
  doorbells = [];
  jest.useFakeTimers();
});

afterEach(() => {
  doorbells.forEach((doorbell) => doorbell.dispose());
  jest.useRealTimers();
});

describe('the services', () => {
  it('adds none of the controls by default', () => {
    const accessory = newAccessory();
    create(accessory, PLAIN);
    expect(subtypesOf(accessory, S.Switch)).toEqual([]);
    expect(subtypesOf(accessory, S.MotionSensor)).toEqual([undefined]);
  });

  it('adds two switches and five detection sensors by subtype, named after the doorbell, the main sensor staying primary', () => {
    const accessory = newAccessory();
    create(accessory);

    expect(subtypesOf(accessory, S.Switch)).toEqual(['motion-alerts', 'chime']);
    expect(subtypesOf(accessory, S.MotionSensor)).toEqual(SENSORS);
    expect(namesOf(serviceOf(accessory, S.Switch, 'motion-alerts'))).toEqual(['Front Door Motion Alerts', 'Front Door Motion Alerts']);
    expect(namesOf(serviceOf(accessory, S.Switch, 'chime'))).toEqual(['Front Door Chime', 'Front Door Chime']);
    expect(['person', 'vehicle', 'package', 'animal', 'other'].map((subtype) => namesOf(serviceOf(accessory, S.MotionSensor, subtype)))).toEqual([
      ['Front Door Person', 'Front Door Person'],
      ['Front Door Vehicle', 'Front Door Vehicle'],
      ['Front Door Package', 'Front Door Package'],
      ['Front Door Animal', 'Front Door Animal'],
      ['Front Door Other Motion', 'Front Door Other Motion'],
    ]);
    expect(accessory.services.filter((service) => service.isPrimaryService)).toEqual([serviceOf(accessory, S.MotionSensor)]);
  });

  it('starts with both switches on and every sensor off', async () => {
    const accessory = newAccessory();
    create(accessory);
    expect(await readBoth(switchOf(accessory, 'motion-alerts'))).toEqual([true, true]);
    expect(await readBoth(switchOf(accessory, 'chime'))).toEqual([true, true]);
    for (const subtype of SENSORS) {
      expect(await readBoth(motionOf(accessory, subtype))).toEqual([false, false]);
    }
  });

  it('adds no Chime switch without the doorbell button', () => {
    const accessory = newAccessory();
    create(accessory, { ...ALL, button: false });
    expect(subtypesOf(accessory, S.Switch)).toEqual(['motion-alerts']);
  });

  it('removes what the config no longer asks for, keeping the UUID, the other services and their state', async () => {
    const accessory = newAccessory();
    create(accessory).dispose();
    await write(accessory, 'chime', false);
    const restored = reloadFromCache(accessory);

    create(restored, { ...ALL, motionSwitch: false, detections: ['person', 'other'] });

    expect(restored.UUID).toBe(accessory.UUID);
    expect(subtypesOf(restored, S.Switch)).toEqual(['chime']);
    expect(subtypesOf(restored, S.MotionSensor)).toEqual([undefined, 'person', 'other']);
    expect(await readBoth(switchOf(restored, 'chime'))).toEqual([false, false]);
    expect(serviceOf(restored, S.MotionSensor).isPrimaryService).toBe(true);
  });

  it('names each service by the HomeKit name rule: cleaned, the suffix kept whole, at most 64 characters', () => {
    const accessory = newAccessory();
    create(accessory, { ...ALL, name: '🚪 Front Door (Main)' });
    expect(namesOf(serviceOf(accessory, S.Switch, 'motion-alerts'))).toEqual(['Front Door Main Motion Alerts', 'Front Door Main Motion Alerts']);

    const long = newAccessory();
    const longName = `${'Very Long Front Door Name '.repeat(4)}(Main)`;
    create(long, { ...ALL, name: longName });
    const SUFFIXES: Record<string, string> = {
      person: ' Person',
      vehicle: ' Vehicle',
      package: ' Package',
      animal: ' Animal',
      other: ' Other Motion',
      'motion-alerts': ' Motion Alerts',
      chime: ' Chime',
    };
    const named = long.services.filter(({ subtype }) => subtype !== undefined);
    expect(named.map(({ subtype }) => subtype)).toEqual(['person', 'vehicle', 'package', 'animal', 'other', 'motion-alerts', 'chime']);
    for (const service of named) {
      const name = service.getCharacteristic(C.Name).value as string;
      const suffix = SUFFIXES[service.subtype as string];
      expect([name, name.endsWith(suffix), name.length <= 64, isHomeKitName(name)]).toEqual([cleanName(longName, PLAIN.deviceId, suffix), true, true, true]);
    }
  });

  it('takes over cached services without adding them twice, and keeps a name given in the Home app', async () => {
    const accessory = newAccessory();
    create(accessory).dispose();
    await serviceOf(accessory, S.Switch, 'chime').getCharacteristic(C.ConfiguredName).handleSetRequest('Nursery Chime');
    const restored = reloadFromCache(accessory);
    create(restored);

    expect(subtypesOf(restored, S.Switch)).toEqual(['motion-alerts', 'chime']);
    expect(subtypesOf(restored, S.MotionSensor)).toEqual(SENSORS);
    expect(namesOf(serviceOf(restored, S.Switch, 'chime'))).toEqual(['Front Door Chime', 'Nursery Chime']);

    const renamed = reloadFromCache(restored);
    create(renamed, { ...ALL, name: 'Porch' });
    expect(namesOf(serviceOf(renamed, S.Switch, 'chime'))).toEqual(['Porch Chime', 'Porch Chime']);
    expect(namesOf(serviceOf(renamed, S.MotionSensor, 'person'))).toEqual(['Porch Person', 'Porch Person']);
  });
});

describe('the Motion Alerts switch', () => {
  it('turned off, ignores motion alerts, rings still pressing the button; turned on again, they drive the sensors', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const presses: unknown[] = [];
    accessory.getService(S.StatelessProgrammableSwitch)!.getCharacteristic(C.ProgrammableSwitchEvent).on('change', ({ newValue }) => presses.push(newValue));

    await write(accessory, 'motion-alerts', false);
    expect(doorbell.motionDetected('person')).toBe(false);
    expect([motionOf(accessory).value, motionOf(accessory, 'person').value]).toEqual([false, false]);
    expect(doorbell.rang()).toBe('chimed');
    expect(presses).toEqual([SINGLE_PRESS]);

    await write(accessory, 'motion-alerts', true);
    expect(doorbell.motionDetected('person')).toBe(true);
    expect([motionOf(accessory).value, motionOf(accessory, 'person').value]).toEqual([true, true]);
  });

  it('turned off, turns every motion sensor of the doorbell off at once and leaves no end of motion pending', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const timersBefore = jest.getTimerCount();
    doorbell.motionDetected('vehicle');
    expect([motionOf(accessory).value, motionOf(accessory, 'vehicle').value]).toEqual([true, true]);

    await write(accessory, 'motion-alerts', false);

    for (const subtype of SENSORS) {
      expect(await readBoth(motionOf(accessory, subtype))).toEqual([false, false]);
    }
    expect(jest.getTimerCount()).toBe(timersBefore);
  });

  it('stays off across a restart, kept in the context and saved to the cache at once, until turned on', async () => {
    const accessory = newAccessory();
    create(accessory);
    const updates = test.calls.update;
    await write(accessory, 'motion-alerts', false);
    expect(test.calls.update).toBe(updates + 1);
    expect(accessory.context).toMatchObject({ motionAlerts: false });

    const restored = reloadFromCache(accessory);
    const doorbell = create(restored);
    expect(await readBoth(switchOf(restored, 'motion-alerts'))).toEqual([false, false]);
    expect(doorbell.motionDetected()).toBe(false);

    await write(restored, 'motion-alerts', true);
    const again = reloadFromCache(restored);
    expect(create(again).motionDetected()).toBe(true);
  });

  it('forgets its state when removed from the config: motion alerts work, and it comes back on', async () => {
    const accessory = newAccessory();
    create(accessory);
    await write(accessory, 'motion-alerts', false);

    const withoutSwitch = reloadFromCache(accessory);
    expect(create(withoutSwitch, { ...ALL, motionSwitch: false }).motionDetected()).toBe(true);
    const withSwitchAgain = reloadFromCache(withoutSwitch);
    create(withSwitchAgain);
    expect(await readBoth(switchOf(withSwitchAgain, 'motion-alerts'))).toEqual([true, true]);
  });
});

describe('the Chime switch', () => {
  it('turned off, lets a ring fire only the programmable switch; turned on, both', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const presses = recordPresses(accessory);

    await write(accessory, 'chime', false);
    expect(doorbell.rang(0)).toBe('silent');
    expect(presses).toEqual({ doorbell: [], switch: [SINGLE_PRESS] });

    await write(accessory, 'chime', true);
    expect(doorbell.rang(MIN_RING_INTERVAL_MS)).toBe('chimed');
    expect(presses).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS, SINGLE_PRESS] });
  });

  it('stays off across a restart, apart from the Motion Alerts switch: each is found by its subtype', async () => {
    const accessory = newAccessory();
    create(accessory);
    await write(accessory, 'chime', false);

    const restored = reloadFromCache(accessory);
    // The order of the services in the cache says nothing about which switch is which.
    restored.services.reverse();
    const doorbell = create(restored);
    const presses = recordPresses(restored);
    expect(await readBoth(switchOf(restored, 'chime'))).toEqual([false, false]);
    expect(await readBoth(switchOf(restored, 'motion-alerts'))).toEqual([true, true]);
    expect(doorbell.rang()).toBe('silent');
    expect(doorbell.motionDetected()).toBe(true);
    expect(presses).toEqual({ doorbell: [], switch: [SINGLE_PRESS] });
  });
});

describe('the detection sensors', () => {
  it('turn on only for their own detection, for motionTimeout, while the main sensor turns on for every motion', () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const state = () => SENSORS.map((subtype) => motionOf(accessory, subtype).value);

    doorbell.motionDetected('person');
    expect(state()).toEqual([true, true, false, false, false, false]);
    jest.advanceTimersByTime(10_000);
    doorbell.motionDetected();
    expect(state()).toEqual([true, true, false, false, false, false]);
    jest.advanceTimersByTime(20_000);
    expect(state()).toEqual([true, false, false, false, false, false]);
    doorbell.motionDetected('other');
    expect(state()).toEqual([true, false, false, false, false, true]);
    jest.advanceTimersByTime(30_000);
    expect(state()).toEqual([false, false, false, false, false, false]);
  });

  it.each(['package', 'animal'] as const)('turn the %s sensor on beside the main one, and no other, for motionTimeout', (detection) => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const on = () => SENSORS.filter((subtype) => motionOf(accessory, subtype).value === true);

    expect(doorbell.motionDetected(detection)).toBe(true);
    expect(on()).toEqual([undefined, detection]);
    jest.advanceTimersByTime(30_000);
    expect(on()).toEqual([]);
  });

  it('leave the package and animal sensors off while the Motion Alerts switch is off, and turn them off when it goes off', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const state = () => [motionOf(accessory).value, motionOf(accessory, 'package').value, motionOf(accessory, 'animal').value];
    doorbell.motionDetected('package');
    doorbell.motionDetected('animal');
    expect(state()).toEqual([true, true, true]);

    await write(accessory, 'motion-alerts', false);
    expect(state()).toEqual([false, false, false]);
    expect([doorbell.motionDetected('package'), doorbell.motionDetected('animal')]).toEqual([false, false]);
    expect(state()).toEqual([false, false, false]);
  });

  it('leave a detection without a sensor of its own to the main sensor', () => {
    const accessory = newAccessory();
    const doorbell = create(accessory, { ...ALL, detections: ['person'] });
    doorbell.motionDetected('vehicle');
    expect([motionOf(accessory).value, motionOf(accessory, 'person').value]).toEqual([true, false]);
  });

  it('show the same fault as the main sensor', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const faults = () => Promise.all(SENSORS.map((subtype) => serviceOf(accessory, S.MotionSensor, subtype).getCharacteristic(C.StatusFault).handleGetRequest()));

    expect(await faults()).toEqual([1, 1, 1, 1, 1, 1]);
    doorbell.setConfirmed(true);
    expect(await faults()).toEqual([0, 0, 0, 0, 0, 0]);
    doorbell.setDeliveryDown(true);
    expect(await faults()).toEqual([1, 1, 1, 1, 1, 1]);
  });
});

/** When a motion alert was accepted: a moment well before the test ran, so that it cannot pass for "now". */
const ACCEPTED_AT = 12.5;

describe('changes, as seen from outside HomeKit', () => {
  it('reports motion per sensor, switches and rings', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const changes: DoorbellChange[] = [];
    doorbell.onChange((change) => changes.push(change));

    // The alert's accepted time is carried as it is, from before HomeKit was updated.
    doorbell.motionDetected('person', ACCEPTED_AT);
    await write(accessory, 'chime', false);
    doorbell.rang();
    // The fake clock moves on, within the motion timeout, so that the switch's moment is its own.
    jest.advanceTimersByTime(1_000);
    const switchedAt = performance.now();
    await write(accessory, 'motion-alerts', false);

    expect(changes).toEqual([
      { type: 'motion', sensor: 'main', detected: true, since: ACCEPTED_AT },
      { type: 'motion', sensor: 'person', detected: true, since: ACCEPTED_AT },
      { type: 'control', control: 'chime', on: false, how: 'turned' },
      { type: 'ring', outcome: 'silent' },
      { type: 'motion', sensor: 'main', detected: false, since: expect.any(Number) },
      { type: 'motion', sensor: 'person', detected: false, since: expect.any(Number) },
      { type: 'control', control: 'motion-alerts', on: false, how: 'turned' },
    ]);
    // Turned off by the switch: since then, not since the alert.
    const offSince = changes.flatMap((change) => (change.type === 'motion' && !change.detected ? [change.since] : []));
    expect(offSince).toEqual([switchedAt, switchedAt]);
    expect(switchedAt).toBeGreaterThan(ACCEPTED_AT);
    expect(await readBoth(switchOf(accessory, 'chime'))).toEqual([false, false]);
    expect([doorbell.chimeOn, doorbell.motionAlertsOn]).toEqual([false, false]);
  });
});
