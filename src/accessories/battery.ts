import type { API, PlatformAccessory, Service } from 'homebridge';
import { forgetOptionalTypes, removeService } from './services.js';

/** A battery at this many percent or less reads low: the Home app lists it in the home's status. */
export const LOW_BATTERY_PERCENT = 20;

/** The level HomeKit shows: a whole percentage, within 0 to 100 whatever the service said. */
export function batteryLevel(percent: number): number {
  return Math.min(100, Math.max(0, Math.round(percent)));
}

export function batteryIsLow(level: number): boolean {
  return level <= LOW_BATTERY_PERCENT;
}

/**
 * A battery doorbell's charge as a HomeKit Battery service: its level, whether it is low, and that it
 * is not charged in place (the doorbell is taken off the wall for that). State lives in the service's
 * characteristics, set when a read changes it.
 */
export class BatteryPart {
  private constructor(
    private readonly api: API,
    private readonly service: Service,
  ) {}

  /**
   * Adds the service with its level (`level`: as batteryLevel made it), or takes it over from a cached
   * accessory; `name` is made by cleanName. The service carries its Name and no ConfiguredName: the
   * Home app shows a battery among the accessory's details, never as a tile of its own that a user
   * names, and each characteristic costs about 0.7 KiB on each battery doorbell.
   */
  static attach(api: API, accessory: PlatformAccessory, name: string, level: number): BatteryPart {
    const { Characteristic, Service } = api.hap;
    const service = accessory.getService(Service.Battery) ?? accessory.addService(Service.Battery, name);
    // Homebridge's cache keeps displayName and builds the service from it at the next start.
    service.displayName = name;
    service.updateCharacteristic(Characteristic.Name, name);
    service.updateCharacteristic(Characteristic.ChargingState, Characteristic.ChargingState.NOT_CHARGEABLE);
    const part = new BatteryPart(api, service);
    part.show(level);
    // Every characteristic it will carry is there now.
    forgetOptionalTypes(service);
    return part;
  }

  /** Removes the service, if a cached accessory has it: the doorbell is wired now, or has no battery. */
  static detach(api: API, accessory: PlatformAccessory): void {
    removeService(accessory, api.hap.Service.Battery);
  }

  /** `level`: as batteryLevel made it. */
  show(level: number): void {
    const { BatteryLevel, StatusLowBattery } = this.api.hap.Characteristic;
    this.service
      .updateCharacteristic(BatteryLevel, level)
      .updateCharacteristic(StatusLowBattery, batteryIsLow(level) ? StatusLowBattery.BATTERY_LEVEL_LOW : StatusLowBattery.BATTERY_LEVEL_NORMAL);
  }
}
