import type { API, CharacteristicValue, PlatformAccessory, Service } from 'homebridge';
import { CONTROLS, type Control } from '../values/controls.js';
import { cleanName } from './names.js';
import { namedService, removeService } from './services.js';

/**
 * A Switch in the Home app that the household turns on and off, by hand or in automations
 * ("motion alerts off while we are home"). On by default. Its state is kept in the accessory's
 * context, which Homebridge saves with its cache, so it stays as it was left across restarts. Reads
 * are answered from memory, never from the network.
 */
export class ControlSwitch {
  private on: boolean;

  private constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly control: Control,
    service: Service,
    private readonly onChange: (on: boolean) => void,
  ) {
    const { On } = api.hap.Characteristic;
    this.on = accessory.context[CONTROLS[control].contextKey] !== false;
    service.getCharacteristic(On).onGet(() => this.on);
    // HAP itself shows a controller's write to the other controllers.
    service.getCharacteristic(On).onSet((value: CharacteristicValue) => this.apply(value === true));
    service.updateCharacteristic(On, this.on);
  }

  /** Adds the switch, or takes it over from a cached accessory with its kept state; named after the doorbell. */
  static attach(
    api: API,
    accessory: PlatformAccessory,
    control: Control,
    doorbell: { name: string; deviceId: string },
    onChange: (on: boolean) => void,
  ): ControlSwitch {
    const name = cleanName(doorbell.name, doorbell.deviceId, ` ${CONTROLS[control].suffix}`);
    const service = namedService(api, accessory, api.hap.Service.Switch, name, doorbell.deviceId, control);
    return new ControlSwitch(api, accessory, control, service, onChange);
  }

  /** Removes the switch and forgets its state: added again later, it starts on. */
  static detach(api: API, accessory: PlatformAccessory, control: Control): void {
    removeService(accessory, api.hap.Service.Switch, control);
    delete accessory.context[CONTROLS[control].contextKey];
  }

  get isOn(): boolean {
    return this.on;
  }

  private apply(on: boolean): void {
    if (on === this.on) {
      return;
    }
    this.on = on;
    this.accessory.context[CONTROLS[this.control].contextKey] = on;
    // Saved to Homebridge's cache now, so a crash or power cut cannot bring back the old state.
    this.api.updatePlatformAccessories([this.accessory]);
    this.onChange(on);
  }
}
