import type { API, PlatformAccessory, Service } from 'homebridge';
import type { DoorbellSettings } from '../config/parse-config.js';
import { DoorbellButton } from './doorbell-button.js';
import { cleanName } from './names.js';
import { nameService } from './service-name.js';

/** Derived from the device id alone, so a renamed doorbell keeps its UUID and its automations. */
export function accessoryUuid(api: API, deviceId: string): string {
  return api.hap.uuid.generate(`doorbell-motion:${deviceId}`);
}

/**
 * One doorbell as a HomeKit accessory: a MotionSensor (the primary service) and, unless turned off,
 * a doorbell button for rings. State lives in memory and is pushed, never fetched.
 */
export class DoorbellAccessory {
  private readonly information: Service;
  private readonly sensor: Service;
  private readonly button: DoorbellButton | undefined;
  private motion = false;
  /** Faulted until the platform confirms the motion subscription. */
  private confirmed = false;
  /** The way notifications arrive (the push relay) has been down too long. */
  private deliveryDown = false;
  private readonly motionTimeout: number;
  private motionEndTimer?: NodeJS.Timeout;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    settings: DoorbellSettings,
  ) {
    const { Characteristic, Service } = api.hap;
    this.motionTimeout = settings.motionTimeout;
    // The platform matches cached accessories to configured doorbells by this.
    accessory.context.deviceId = settings.deviceId;

    // Every HAP accessory is created with an AccessoryInformation service.
    this.information = accessory.getService(Service.AccessoryInformation)!
      .setCharacteristic(Characteristic.Manufacturer, 'Doorbell Motion')
      .setCharacteristic(Characteristic.Model, 'Doorbell')
      .setCharacteristic(Characteristic.SerialNumber, settings.deviceId);

    // A cached accessory already has its sensor service; adding a second would throw.
    this.sensor = accessory.getService(Service.MotionSensor) ?? accessory.addService(Service.MotionSensor);
    this.sensor.setPrimaryService(true);
    this.sensor.getCharacteristic(Characteristic.MotionDetected).onGet(() => this.motion);
    this.sensor.getCharacteristic(Characteristic.StatusFault).onGet(() => this.statusFault());
    // The cache may hold the last session's values; this session knows nothing yet.
    this.sensor.updateCharacteristic(Characteristic.MotionDetected, this.motion);
    this.sensor.updateCharacteristic(Characteristic.StatusFault, this.statusFault());
    const name = cleanName(settings.name, settings.deviceId);
    accessory.updateDisplayName(name);
    this.information.updateCharacteristic(Characteristic.Name, name);
    nameService(api, this.sensor, name, settings.deviceId);
    if (settings.button) {
      this.button = DoorbellButton.attach(api, accessory, name);
    } else {
      DoorbellButton.detach(api, accessory);
    }
  }

  /** The name HomeKit shows, for log lines such as "Motion at Front Door". */
  get name(): string {
    return this.accessory.displayName;
  }

  motionDetected(): void {
    clearTimeout(this.motionEndTimer);
    this.motionEndTimer = setTimeout(() => this.setMotion(false), this.motionTimeout * 1000);
    // Homebridge's own servers keep the process alive while it runs; a pending end of motion must not
    // hold it open on exit. dispose() clears the timer on an orderly shutdown.
    this.motionEndTimer.unref();
    this.setMotion(true);
  }

  /** A press of the doorbell's button; false when the button is turned off. A ring never changes motion. */
  rang(): boolean {
    this.button?.ring();
    return this.button !== undefined;
  }

  /** Whether this doorbell's motion alerts are confirmed: subscribed, with a valid session. */
  setConfirmed(confirmed: boolean): void {
    this.confirmed = confirmed;
    this.showFault();
  }

  setDeliveryDown(down: boolean): void {
    this.deliveryDown = down;
    this.showFault();
  }

  dispose(): void {
    clearTimeout(this.motionEndTimer);
  }

  private setMotion(motion: boolean): void {
    this.motion = motion;
    this.sensor.updateCharacteristic(this.api.hap.Characteristic.MotionDetected, motion);
  }

  private showFault(): void {
    this.sensor.updateCharacteristic(this.api.hap.Characteristic.StatusFault, this.statusFault());
  }

  /** A fault until alerts are confirmed, and while they cannot arrive. */
  private statusFault(): number {
    const { StatusFault } = this.api.hap.Characteristic;
    return this.confirmed && !this.deliveryDown ? StatusFault.NO_FAULT : StatusFault.GENERAL_FAULT;
  }
}
