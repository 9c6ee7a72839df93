import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { PlatformAccessory, WithUUID } from 'homebridge';
import type { Characteristic } from '@homebridge/hap-nodejs';
import { accessoryUuid, DoorbellAccessory, type DoorbellChange } from '../../src/accessories/doorbell-accessory.js';
import { createTestApi, reloadFromCache } from '../../scripts/lib/homebridge-api.js';
import { doorbellSettings } from '../../scripts/lib/platform-harness.js';

const { api } = createTestApi({ storagePath: tmpdir() });
const { Characteristic: C, Service } = api.hap;
const FRONT_DOOR = doorbellSettings({ deviceId: '1234567', name: 'Front Door', motionTimeout: 30 });

function newAccessory(settings = FRONT_DOOR): PlatformAccessory {
  return new api.platformAccessory(settings.name, accessoryUuid(api, settings.deviceId));
}

function sensorService(accessory: PlatformAccessory) {
  const service = accessory.getService(Service.MotionSensor);
  if (service === undefined) {
    throw new Error('no MotionSensor service');
  }
  return service;
}

type CharacteristicType = WithUUID<new () => Characteristic>;

/** The value HAP holds, i.e. what the last updateCharacteristic pushed to subscribed controllers. */
function pushed(accessory: PlatformAccessory, type: CharacteristicType) {
  return sensorService(accessory).getCharacteristic(type).value;
}

/** What a controller's read answers, through the onGet handler. */
function read(accessory: PlatformAccessory, type: CharacteristicType) {
  return sensorService(accessory).getCharacteristic(type).handleGetRequest();
}

async function expectState(accessory: PlatformAccessory, motion: boolean, fault: number) {
  expect(pushed(accessory, C.MotionDetected)).toBe(motion);
  expect(pushed(accessory, C.StatusFault)).toBe(fault);
  await expect(read(accessory, C.MotionDetected)).resolves.toBe(motion);
  await expect(read(accessory, C.StatusFault)).resolves.toBe(fault);
}

describe('accessoryUuid', () => {
  it('derives the UUID from the device id alone', () => {
    expect(accessoryUuid(api, '1234567')).toBe(api.hap.uuid.generate('doorbell-motion:1234567'));
    expect(accessoryUuid(api, '1234567')).not.toBe(accessoryUuid(api, '1234568'));
  });
});

describe('DoorbellAccessory', () => {
  let sensors: DoorbellAccessory[];

  function create(accessory: PlatformAccessory, settings = FRONT_DOOR): DoorbellAccessory {
    const sensor = new DoorbellAccessory(api, accessory, settings);
    sensors.push(sensor);
    return sensor;
  }

  beforeEach(() => {
    sensors = [];
    jest.useFakeTimers();
  });

  afterEach(() => {
    sensors.forEach((sensor) => sensor.dispose());
    jest.useRealTimers();
  });

  it('describes the doorbell in AccessoryInformation and keeps its id in the context', () => {
    const accessory = newAccessory();
    create(accessory);
    const information = accessory.getService(Service.AccessoryInformation)!;
    expect(information.getCharacteristic(C.Manufacturer).value).toBe('Doorbell Motion');
    expect(information.getCharacteristic(C.Model).value).toBe('Doorbell');
    expect(information.getCharacteristic(C.SerialNumber).value).toBe('1234567');
    expect(information.getCharacteristic(C.Name).value).toBe('Front Door');
    expect(sensorService(accessory).getCharacteristic(C.Name).value).toBe('Front Door');
    expect(accessory.context).toEqual({ deviceId: '1234567' });
  });

  it('starts without motion and in GENERAL_FAULT, since nothing is subscribed yet', async () => {
    const accessory = newAccessory();
    create(accessory);
    await expectState(accessory, false, C.StatusFault.GENERAL_FAULT);
  });

  it('detects motion at once and ends it motionTimeout seconds after the latest alert', async () => {
    const accessory = newAccessory();
    const sensor = create(accessory);
    sensor.motionDetected();
    await expectState(accessory, true, C.StatusFault.GENERAL_FAULT);

    jest.advanceTimersByTime(20_000);
    sensor.motionDetected();
    jest.advanceTimersByTime(29_999);
    expect(pushed(accessory, C.MotionDetected)).toBe(true);
    jest.advanceTimersByTime(1);
    await expect(read(accessory, C.MotionDetected)).resolves.toBe(false);
    expect(pushed(accessory, C.MotionDetected)).toBe(false);
  });

  it('ends a single alert after the timeout and leaves no timer behind', () => {
    const accessory = newAccessory();
    const sensor = create(accessory);
    sensor.motionDetected();
    jest.advanceTimersByTime(29_999);
    expect(pushed(accessory, C.MotionDetected)).toBe(true);
    jest.advanceTimersByTime(1);
    expect(pushed(accessory, C.MotionDetected)).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('shows no fault only while its alerts are confirmed and delivery is up', async () => {
    const accessory = newAccessory();
    const sensor = create(accessory);
    sensor.setConfirmed(true);
    await expectState(accessory, false, C.StatusFault.NO_FAULT);
    sensor.setDeliveryDown(true);
    await expectState(accessory, false, C.StatusFault.GENERAL_FAULT);
    sensor.setConfirmed(false);
    sensor.setDeliveryDown(false);
    await expectState(accessory, false, C.StatusFault.GENERAL_FAULT);
    sensor.setConfirmed(true);
    await expectState(accessory, false, C.StatusFault.NO_FAULT);
  });

  it('takes a new name and timeout from the config on the next start, keeping the UUID', () => {
    const accessory = newAccessory();
    create(accessory).dispose();
    const uuid = accessory.UUID;
    const sensor = create(accessory, { ...FRONT_DOOR, name: 'Back Door', motionTimeout: 10 });

    expect(accessory.UUID).toBe(uuid);
    expect(accessory.displayName).toBe('Back Door');
    expect(sensor.name).toBe('Back Door');
    expect(accessory.getService(Service.AccessoryInformation)!.getCharacteristic(C.Name).value).toBe('Back Door');
    expect(sensorService(accessory).getCharacteristic(C.Name).value).toBe('Back Door');
    expect(sensorService(accessory).getCharacteristic(C.ConfiguredName).value).toBe('Back Door');

    sensor.motionDetected();
    jest.advanceTimersByTime(10_000);
    expect(pushed(accessory, C.MotionDetected)).toBe(false);
  });

  it('keeps a name given in the Home app until the configured name changes', async () => {
    const accessory = newAccessory();
    create(accessory);
    await sensorService(accessory).getCharacteristic(C.ConfiguredName).handleSetRequest('Porch');

    const restarted = reloadFromCache(accessory);
    create(restarted);
    expect(sensorService(restarted).getCharacteristic(C.ConfiguredName).value).toBe('Porch');

    const renamed = reloadFromCache(restarted);
    create(renamed, { ...FRONT_DOOR, name: 'Back Door' });
    expect(sensorService(renamed).getCharacteristic(C.ConfiguredName).value).toBe('Back Door');
    expect(renamed.displayName).toBe('Back Door');
  });

  it('dispose() clears the pending end of motion', () => {
    const accessory = newAccessory();
    const sensor = create(accessory);
    // HAP keeps a timer of its own (a debounced configuration update) pending on a new accessory.
    const hapTimers = jest.getTimerCount();
    sensor.motionDetected();
    expect(jest.getTimerCount()).toBe(hapTimers + 1);
    sensor.dispose();
    expect(jest.getTimerCount()).toBe(hapTimers);
    jest.advanceTimersByTime(60_000);
    expect(pushed(accessory, C.MotionDetected)).toBe(true);
  });

  it('does not keep the process alive for a pending end of motion', () => {
    jest.useRealTimers();
    const timersKeepingAlive = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const sensor = create(newAccessory());
    const before = timersKeepingAlive();
    sensor.motionDetected();
    expect(timersKeepingAlive()).toBe(before);
  });

  it('reuses the MotionSensor service of an accessory it is constructed on again', () => {
    const accessory = newAccessory();
    create(accessory);
    create(accessory);
    expect(accessory.services.filter((service) => service.UUID === Service.MotionSensor.UUID)).toHaveLength(1);
  });

  it('restores a cached accessory with one MotionSensor service and this session’s state', async () => {
    const accessory = newAccessory();
    const sensor = create(accessory);
    sensor.setConfirmed(true);
    sensor.motionDetected();

    const restored = reloadFromCache(accessory);
    create(restored);
    expect(restored.UUID).toBe(accessory.UUID);
    expect(restored.services.filter((service) => service.UUID === Service.MotionSensor.UUID)).toHaveLength(1);
    await expectState(restored, false, C.StatusFault.GENERAL_FAULT);
  });
});

describe('the doorbell button', () => {
  let doorbells: DoorbellAccessory[];

  beforeEach(() => {
    doorbells = [];
  });

  afterEach(() => {
    doorbells.forEach((doorbell) => doorbell.dispose());
  });

  function create(accessory: PlatformAccessory, settings = FRONT_DOOR): DoorbellAccessory {
    const doorbell = new DoorbellAccessory(api, accessory, settings);
    doorbells.push(doorbell);
    return doorbell;
  }

  const servicesOf = (accessory: PlatformAccessory) => accessory.services.map((service) => service.UUID);
  const switchEvents = (accessory: PlatformAccessory) =>
    [Service.Doorbell, Service.StatelessProgrammableSwitch].map((type) => accessory.getService(type)!.getCharacteristic(C.ProgrammableSwitchEvent));

  /** Every ProgrammableSwitchEvent each service sends, as a paired controller would get them. */
  function recordPresses(accessory: PlatformAccessory): unknown[][] {
    return switchEvents(accessory).map((characteristic) => {
      const presses: unknown[] = [];
      characteristic.on('change', ({ newValue }) => presses.push(newValue));
      return presses;
    });
  }

  it('adds a Doorbell and a StatelessProgrammableSwitch, the motion sensor staying primary', () => {
    const accessory = newAccessory();
    create(accessory);

    expect(servicesOf(accessory)).toEqual(
      expect.arrayContaining([Service.MotionSensor.UUID, Service.Doorbell.UUID, Service.StatelessProgrammableSwitch.UUID]),
    );
    expect(accessory.getService(Service.MotionSensor)!.isPrimaryService).toBe(true);
    expect(accessory.getService(Service.Doorbell)!.isPrimaryService).toBe(false);
    for (const characteristic of switchEvents(accessory)) {
      expect(characteristic.props.validValues).toEqual([C.ProgrammableSwitchEvent.SINGLE_PRESS]);
    }
  });

  it('fires SINGLE_PRESS on both at a ring, before the ring call returns, and leaves motion alone', async () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    doorbell.setConfirmed(true);
    const presses = recordPresses(accessory);

    // Within milliseconds, whatever the machine's speed: pressed in the call itself, with no timer
    // (the clock is fake and stands still) and no await in between.
    expect(doorbell.rang()).toBe('chimed');

    expect(presses).toEqual([[C.ProgrammableSwitchEvent.SINGLE_PRESS], [C.ProgrammableSwitchEvent.SINGLE_PRESS]]);
    await expectState(accessory, false, C.StatusFault.NO_FAULT);
  });

  it('presses at most once every 5 s, counted from the last press, and tells nobody of a ring it dropped', () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const presses = recordPresses(accessory);
    const rings: DoorbellChange[] = [];
    doorbell.onChange((change) => rings.push(change));

    // Times on the monotonic clock the platform reads as each ring is accepted.
    const outcomes = [1_000, 3_000, 5_999, 6_000, 10_999, 11_000].map((at) => doorbell.rang(at));

    expect(outcomes).toEqual(['chimed', 'too-soon', 'too-soon', 'chimed', 'too-soon', 'chimed']);
    expect(presses.map((events) => events.length)).toEqual([3, 3]);
    expect(rings).toEqual([1, 2, 3].map(() => ({ type: 'ring', outcome: 'chimed' })));
  });

  it('through a relay, judges by the relay times when the ring is later by its clock, and by arrival otherwise', () => {
    const accessory = newAccessory();
    const doorbell = create(accessory);
    const presses = recordPresses(accessory);
    const T = 1_800_000_000;

    // [arrival on the monotonic clock, the relay's time in unix seconds]: all but the last arrive within a second.
    const rings: Array<[number, number | undefined]> = [
      [1_000, T], // the first press
      [1_001, T + 10], // a second visitor, caught up with the first: 10 s later by the relay
      [1_002, T + 14], // 4 s after the last press by the relay: too soon, however late it arrived
      [1_003, T + 10], // the same relay second as the last press: arrival decides, and it is too soon
      [1_004, T + 3], // earlier than the last press by the relay (a clock set back): arrival decides
      [1_005, undefined], // no relay time (a direct delivery): arrival decides
      [6_001, T + 3], // earlier by the relay, but 5 s after the last press by arrival: presses
      [6_002, T + 8], // 5 s after that press by the relay: presses
    ];
    const outcomes = rings.map(([at, relayTime]) => doorbell.rang(at, relayTime));

    expect(outcomes).toEqual(['chimed', 'chimed', 'too-soon', 'too-soon', 'too-soon', 'too-soon', 'chimed', 'chimed']);
    expect(presses.map((events) => events.length)).toEqual([4, 4]);
  });

  it('presses once for a flood within one relay second, and judges a direct ring after a relayed press by arrival', () => {
    const doorbell = create(newAccessory());
    const T = 1_800_000_000;

    const flood = Array.from({ length: 50 }, (_, ring) => doorbell.rang(1_000 + ring * 10, T));

    expect(flood.filter((outcome) => outcome === 'chimed')).toHaveLength(1);
    expect(doorbell.rang(5_999)).toBe('too-soon');
    expect(doorbell.rang(6_000)).toBe('chimed');
    // The last press came without a relay time: a relayed ring is judged by arrival too.
    expect(doorbell.rang(6_001, T + 60)).toBe('too-soon');
  });

  it('has neither service with button false, and a ring does nothing', () => {
    const accessory = newAccessory();
    const doorbell = create(accessory, { ...FRONT_DOOR, button: false });

    expect(servicesOf(accessory)).not.toContain(Service.Doorbell.UUID);
    expect(servicesOf(accessory)).not.toContain(Service.StatelessProgrammableSwitch.UUID);
    expect(doorbell.rang()).toBe('no-button');
  });

  it('removes both services from a cached accessory when the button is turned off, keeping its UUID', () => {
    const accessory = newAccessory();
    create(accessory).dispose();
    const restored = reloadFromCache(accessory);
    expect(servicesOf(restored)).toContain(Service.Doorbell.UUID);

    create(restored, { ...FRONT_DOOR, button: false });

    expect(restored.UUID).toBe(accessory.UUID);
    expect(servicesOf(restored)).not.toContain(Service.Doorbell.UUID);
    expect(servicesOf(restored)).not.toContain(Service.StatelessProgrammableSwitch.UUID);
    expect(servicesOf(restored)).toContain(Service.MotionSensor.UUID);
  });

  it('takes over the services of a cached accessory instead of adding them twice', () => {
    const accessory = newAccessory();
    create(accessory).dispose();
    const restored = reloadFromCache(accessory);
    const doorbell = create(restored);
    const presses = recordPresses(restored);

    expect(servicesOf(restored).filter((uuid) => uuid === Service.Doorbell.UUID)).toHaveLength(1);
    expect(servicesOf(restored).filter((uuid) => uuid === Service.StatelessProgrammableSwitch.UUID)).toHaveLength(1);
    doorbell.rang();
    expect(presses).toEqual([[C.ProgrammableSwitchEvent.SINGLE_PRESS], [C.ProgrammableSwitchEvent.SINGLE_PRESS]]);
  });
});
