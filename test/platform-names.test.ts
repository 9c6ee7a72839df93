/**
 * Names HomeKit accepts, through the whole platform on real HAP objects: every name the plugin gives
 * HomeKit is cleaned, HAP-NodeJS warns of none of them (at launch, at a restart from the cache, or in
 * the check it runs before publishing an accessory), the user hears once what a doorbell is called, and a
 * name given in the Home app survives restarts, an update from an earlier version's cache included.
 */
import { describe, expect, it, jest } from '@jest/globals';
import type { Service } from 'homebridge';
import { hap } from '../scripts/lib/hap.js';
import { PlatformAccessory } from '../scripts/lib/homebridge-api.js';
import { accessoryOf, type RunningPlatform } from '../scripts/lib/platform-harness.js';
import { usePlatformTestbed, type LaunchOptions } from './support/platform-testbed.js';

const { Characteristic, Service: Services } = hap;
const [FRONT, BACK, GARAGE] = ['1234567', '9007199254740993', '42'];
const LONG = Array.from({ length: 10 }, (_, index) => `Garage Door ${index}`).join(' '); // 139 characters

const ODD_NAMES = [
  { deviceId: FRONT, name: 'Front Door (Main)' },
  { deviceId: BACK, name: '🚪 Porch' },
  { deviceId: GARAGE, name: LONG },
];
const CLEANED = ['Front Door Main', 'Porch', 'Garage Door 0 Garage Door 1 Garage Door 2 Garage Door 3 Garage D'];

/**
 * Everything HAP-NodeJS prints while `action` runs: its name check uses console.warn, and a
 * characteristic warning (a value too long, say) reaches console.warn or console.error when no
 * bridge listens, as here; its check before publishing uses console.log.
 */
function hapOutput<T>(action: () => T): { result: T; printed: string[] } {
  const printed: string[] = [];
  const spies = (['warn', 'error', 'log'] as const).map((method) =>
    jest.spyOn(console, method).mockImplementation((...message: unknown[]) => printed.push(message.join(' '))),
  );
  try {
    return { result: action(), printed };
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
}

function sensorOf(platform: RunningPlatform, deviceId: string): Service {
  return accessoryOf(platform, deviceId).getService(Services.MotionSensor)!;
}

/** Every name an accessory gives HomeKit: its own, and each service's displayName, Name and ConfiguredName. */
function namesOf(accessory: PlatformAccessory): unknown[] {
  const names: unknown[] = [accessory.displayName];
  for (const service of accessory.services) {
    if (service.UUID !== Services.AccessoryInformation.UUID) {
      names.push(service.displayName);
    }
    for (const type of [Characteristic.Name, Characteristic.ConfiguredName]) {
      if (service.testCharacteristic(type)) {
        names.push(service.getCharacteristic(type).value);
      }
    }
  }
  return names;
}

/**
 * HAP-NodeJS's own check of an accessory before it is published, a private method, run on each
 * accessory: a bridge of HAP-NodeJS 2.1.7 means to run it on its bridged accessories but skips them.
 */
function validateBeforePublishing(accessories: readonly PlatformAccessory[]): string[] {
  type Validated = { validateAccessory(mainAccessory: boolean): void };
  return hapOutput(() => accessories.forEach((accessory) => (accessory._associatedHAPAccessory as unknown as Validated).validateAccessory(false))).printed;
}

describe('names HomeKit accepts', () => {
  const testbed = usePlatformTestbed([FRONT, BACK, GARAGE]);
  const launch = (options: LaunchOptions = {}) => hapOutput(() => testbed.launch({ doorbells: ODD_NAMES, ...options }));

  it('gives HomeKit the cleaned name everywhere, and HAP-NodeJS prints no warning at launch, at a restart, or before publishing', async () => {
    const { result: first, printed } = launch();
    expect(printed).toEqual([]);

    ODD_NAMES.forEach(({ deviceId }, index) => {
      const accessory = accessoryOf(first, deviceId);
      expect(namesOf(accessory)).toEqual(Array(namesOf(accessory).length).fill(CLEANED[index]));
      // The accessory, AccessoryInformation, the sensor (displayName, Name, ConfiguredName), Doorbell and switch.
      expect(namesOf(accessory)).toHaveLength(9);
    });
    expect(validateBeforePublishing([...first.test.registered.values()])).toEqual([]);

    await testbed.stop(first);
    const restart = launch({ cached: first.test.registered });
    expect(restart.printed).toEqual([]);
    expect(ODD_NAMES.map(({ deviceId }) => accessoryOf(restart.result, deviceId).displayName)).toEqual(CLEANED);
    expect(restart.result.test.calls.update).toBe(0);
  });

  it('says once per launch what a doorbell whose name was cleaned is called in HomeKit, and nothing of a name HomeKit accepts', () => {
    const { result: platform } = launch({ doorbells: [...ODD_NAMES, { deviceId: '7', name: 'Haustür' }] });
    const said = platform.log.lines.filter(({ message }) => message.includes('in HomeKit')).map(({ level, message }) => `${level} ${message}`);

    expect(said).toHaveLength(3);
    expect(said[0]).toMatch(/^info Doorbell 1234567 "Front Door \(Main\)" is called "Front Door Main" in HomeKit \(a name there has letters, digits, spaces/);
    expect(said[1]).toContain('Doorbell 9007199254740993 "🚪 Porch" is called "Porch" in HomeKit');
    // A name pasted by mistake would make a line as long: the line quotes its first 100 characters.
    expect(said[2]).toContain(`Doorbell 42 "${LONG.slice(0, 100)}…" is called "${CLEANED[2]}" in HomeKit`);
    expect(accessoryOf(platform, '7').displayName).toBe('Haustür');
  });

  it('keeps a name given in the Home app across restarts until the configured name changes, then takes the new one cleaned', async () => {
    const first = launch().result;
    await sensorOf(first, FRONT).getCharacteristic(Characteristic.ConfiguredName).handleSetRequest('Porch Light');
    await testbed.stop(first);

    const second = launch({ cached: first.test.registered }).result;
    expect(sensorOf(second, FRONT).getCharacteristic(Characteristic.ConfiguredName).value).toBe('Porch Light');
    await testbed.stop(second);

    const renamed = launch({ cached: second.test.registered, doorbells: [{ deviceId: FRONT, name: 'Side Door (Old)' }, ...ODD_NAMES.slice(1)] }).result;
    expect(sensorOf(renamed, FRONT).getCharacteristic(Characteristic.ConfiguredName).value).toBe('Side Door Old');
    expect(accessoryOf(renamed, FRONT).displayName).toBe('Side Door Old');
  });

  it('after an update from a version that gave names as configured: its own names are cleaned, one the user gave is kept, then HAP-NodeJS warns no more', async () => {
    const { result: earlier } = hapOutput(() =>
      new Map(
        [
          { deviceId: FRONT, name: 'Front Door (Main)', userGave: undefined },
          { deviceId: BACK, name: '🚪 Porch', userGave: 'Porch Light' },
        ].map(({ deviceId, name, userGave }) => {
          const accessory = asEarlierVersionCachedIt(deviceId, name, userGave);
          return [accessory.UUID, accessory] as const;
        }),
      ),
    );

    const updated = launch({ cached: earlier, doorbells: ODD_NAMES.slice(0, 2) }).result;
    expect(namesOf(accessoryOf(updated, FRONT))).toEqual(Array(9).fill('Front Door Main'));
    expect(sensorOf(updated, BACK).getCharacteristic(Characteristic.ConfiguredName).value).toBe('Porch Light');
    expect(accessoryOf(updated, BACK).displayName).toBe('Porch');
    await testbed.stop(updated);

    const next = launch({ cached: updated.test.registered, doorbells: ODD_NAMES.slice(0, 2) });
    expect(next.printed).toEqual([]);
  });
});

/** A cached accessory as the plugin's versions before name cleaning left it, the name given as configured. */
function asEarlierVersionCachedIt(deviceId: string, name: string, userGave: string | undefined): PlatformAccessory {
  const accessory = new PlatformAccessory(name, hap.uuid.generate(`doorbell-motion:${deviceId}`));
  accessory.context.deviceId = deviceId;
  const sensor = accessory.addService(Services.MotionSensor, name);
  sensor.addOptionalCharacteristic(Characteristic.ConfiguredName);
  sensor.setCharacteristic(Characteristic.ConfiguredName, userGave ?? name);
  accessory.addService(Services.Doorbell, name);
  accessory.addService(Services.StatelessProgrammableSwitch, name);
  return accessory;
}
