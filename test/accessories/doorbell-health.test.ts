/**
 * A doorbell accessory's Battery service and offline state, on real HAP objects: the values HomeKit
 * accepts (no HAP-NodeJS warning whatever the service said), names cleaned as the other services',
 * and what a restart keeps through Homebridge's accessory cache.
 */
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Characteristic as HapCharacteristic, PlatformAccessory, Service as HapService } from 'homebridge';
import { accessoryUuid, DoorbellAccessory, type DoorbellChange } from '../../src/accessories/doorbell-accessory.js';
import { createTestApi, reloadFromCache } from '../../scripts/lib/homebridge-api.js';
import { doorbellSettings } from '../../scripts/lib/platform-harness.js';

const { api } = createTestApi({ storagePath: tmpdir() });
const { Characteristic: C, Service } = api.hap;
const ODD = doorbellSettings({ deviceId: '1234567', name: '🚪 Front Door (Main)' });

/** Everything HAP-NodeJS prints while `action` runs: its warnings go to the console when no bridge listens. */
function hapOutput(action: () => void): string[] {
  const printed: string[] = [];
  const spies = (['warn', 'error', 'log'] as const).map((method) =>
    jest.spyOn(console, method).mockImplementation((...message: unknown[]) => printed.push(message.join(' '))),
  );
  try {
    action();
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
  return printed;
}

/** The service's characteristic of this type, without adding one as getCharacteristic would. */
function characteristicOf(service: HapService, type: { UUID: string }): HapCharacteristic | undefined {
  return service.characteristics.find((characteristic) => characteristic.UUID === type.UUID);
}

function battery(accessory: PlatformAccessory) {
  const service = accessory.getService(Service.Battery);
  return (
    service && {
      names: [service.displayName, characteristicOf(service, C.Name)?.value],
      level: characteristicOf(service, C.BatteryLevel)?.value,
      low: characteristicOf(service, C.StatusLowBattery)?.value,
      charging: characteristicOf(service, C.ChargingState)?.value,
    }
  );
}

const fault = (accessory: PlatformAccessory) => accessory.getService(Service.MotionSensor)!.getCharacteristic(C.StatusFault).value;

describe("a doorbell's battery and connection", () => {
  const created: DoorbellAccessory[] = [];
  afterEach(() => created.splice(0).forEach((doorbell) => doorbell.dispose()));

  function create(accessory: PlatformAccessory): DoorbellAccessory {
    const doorbell = new DoorbellAccessory(api, accessory, ODD);
    created.push(doorbell);
    return doorbell;
  }

  it('shows a level HomeKit accepts, with a cleaned name, and no HAP-NodeJS warning, from 0 to 100', () => {
    const accessory = new api.platformAccessory('Front Door', accessoryUuid(api, ODD.deviceId));
    const doorbell = create(accessory);
    const levels: unknown[] = [];

    const printed = hapOutput(() => {
      for (const percent of [87.6, 20.4, 20.5, 0, 100, 0.4]) {
        doorbell.listEntry({ battery: percent });
        levels.push([battery(accessory)?.level, battery(accessory)?.low]);
      }
    });

    expect(printed).toEqual([]);
    const { LOW, NORMAL } = { LOW: C.StatusLowBattery.BATTERY_LEVEL_LOW, NORMAL: C.StatusLowBattery.BATTERY_LEVEL_NORMAL };
    expect(levels).toEqual([[88, NORMAL], [20, LOW], [21, NORMAL], [0, LOW], [100, NORMAL], [0, LOW]]);
    expect(battery(accessory)).toMatchObject({ names: ['Front Door Main Battery', 'Front Door Main Battery'], charging: C.ChargingState.NOT_CHARGEABLE });
  });

  it('carries what the Home app shows of a battery and nothing more: no ConfiguredName, no optional type kept, after a restart too', () => {
    const accessory = new api.platformAccessory('Front Door', accessoryUuid(api, ODD.deviceId));
    create(accessory).listEntry({ battery: 87 });
    const restored = reloadFromCache(accessory);
    create(restored);

    for (const each of [accessory, restored]) {
      const service = each.getService(Service.Battery)!;
      expect(service.characteristics.map(({ UUID }) => UUID).sort()).toEqual([C.Name, C.StatusLowBattery, C.ChargingState, C.BatteryLevel].map(({ UUID }) => UUID).sort());
      expect(each.services.filter(({ optionalCharacteristics }) => optionalCharacteristics.length > 0).map(({ displayName }) => displayName)).toEqual([]);
    }
  });

  it('keeps no list of optional characteristic types on any service, and no HAP-NodeJS warning comes of it as a doorbell with every control works', async () => {
    const every = doorbellSettings({ deviceId: '7654321', name: 'Back Door', motionSwitch: true, chimeSwitch: true, detections: ['person', 'vehicle', 'package', 'animal', 'other'] });
    const accessory = new api.platformAccessory('Back Door', accessoryUuid(api, every.deviceId));
    const doorbell = new DoorbellAccessory(api, accessory, every);
    created.push(doorbell);

    const printed: string[] = [];
    const spies = (['warn', 'error', 'log'] as const).map((method) => jest.spyOn(console, method).mockImplementation((...message: unknown[]) => printed.push(message.join(' '))));
    try {
      doorbell.setConfirmed(true);
      doorbell.listEntry({ battery: 15, online: false });
      doorbell.motionDetected('person');
      doorbell.rang();
      for (const service of accessory.services.filter(({ UUID }) => UUID === Service.Switch.UUID)) {
        await service.getCharacteristic(C.On).handleSetRequest(false);
      }
      doorbell.listEntry({ battery: 60, online: true });
    } finally {
      spies.forEach((spy) => spy.mockRestore());
    }

    expect(printed).toEqual([]);
    // Information, six motion sensors, the doorbell and its press switch, two switches, the battery.
    expect(accessory.services).toHaveLength(12);
    expect(accessory.services.filter(({ optionalCharacteristics }) => optionalCharacteristics.length > 0).map(({ displayName }) => displayName)).toEqual([]);
  });

  it('tells a level change once, and nothing for a read that says the same', () => {
    const accessory = new api.platformAccessory('Front Door', accessoryUuid(api, ODD.deviceId));
    const doorbell = create(accessory);
    const changes: DoorbellChange[] = [];
    doorbell.onChange((change) => changes.push(change));

    [15, 15.2, 14.6, 30].forEach((percent) => doorbell.listEntry({ battery: percent }));

    expect(changes).toEqual([
      { type: 'battery', level: 15, previous: undefined },
      { type: 'battery', level: 30, previous: 15 },
    ]);
  });

  it('keeps the level and the offline state through the accessory cache, and shows both at once after a restart', () => {
    const accessory = new api.platformAccessory('Front Door', accessoryUuid(api, ODD.deviceId));
    const doorbell = create(accessory);
    doorbell.setConfirmed(true);
    doorbell.listEntry({ battery: 12, online: false });
    expect(fault(accessory)).toBe(C.StatusFault.GENERAL_FAULT);

    const restored = reloadFromCache(accessory);
    const again = create(restored);
    again.setConfirmed(true);

    expect(battery(restored)).toMatchObject({ level: 12, low: C.StatusLowBattery.BATTERY_LEVEL_LOW });
    expect(again.health).toEqual({ battery: 12, online: false, offlineSince: doorbell.health.offlineSince });
    expect(fault(restored)).toBe(C.StatusFault.GENERAL_FAULT);
    // A ring proves it is back.
    again.rang();
    expect(fault(restored)).toBe(C.StatusFault.NO_FAULT);
    expect(reloadFromCache(restored).context.offlineSince).toBeUndefined();
  });

  it('removes the service of a doorbell that is wired now, and after a restart does not bring it back', () => {
    const accessory = new api.platformAccessory('Front Door', accessoryUuid(api, ODD.deviceId));
    const doorbell = create(accessory);
    doorbell.listEntry({ battery: 50 });
    doorbell.listEntry({ battery: null });

    expect(battery(accessory)).toBeUndefined();
    const restored = reloadFromCache(accessory);
    create(restored);
    expect(battery(restored)).toBeUndefined();
  });
});
