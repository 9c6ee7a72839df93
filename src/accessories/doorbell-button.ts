import type { API, PlatformAccessory, Service } from 'homebridge';
import { removeService } from './services.js';

/**
 * A ring as a HomeKit doorbell press on the doorbell's accessory: a Doorbell service, which the Home
 * app shows as a doorbell with "doorbell rang" notifications, and a StatelessProgrammableSwitch,
 * which offers press automations. Both fire SINGLE_PRESS, the only press a ring can be.
 */
export class DoorbellButton {
  private constructor(
    private readonly api: API,
    private readonly doorbell: Service,
    private readonly pressSwitch: Service,
  ) {}

  /** Adds both services, or takes them over from a cached accessory; `name` is the accessory's cleaned name. */
  static attach(api: API, accessory: PlatformAccessory, name: string): DoorbellButton {
    const { Characteristic, Service } = api.hap;
    const [doorbell, pressSwitch] = [Service.Doorbell, Service.StatelessProgrammableSwitch].map((type) => {
      const service = accessory.getService(type) ?? accessory.addService(type, name);
      // Homebridge's cache keeps displayName and builds the service from it at the next start.
      service.displayName = name;
      service.updateCharacteristic(Characteristic.Name, name);
      // Without this, the Home app offers double and long presses that can never happen.
      service.getCharacteristic(Characteristic.ProgrammableSwitchEvent).setProps({
        validValues: [Characteristic.ProgrammableSwitchEvent.SINGLE_PRESS],
      });
      return service;
    });
    return new DoorbellButton(api, doorbell, pressSwitch);
  }

  /** Removes both services, if a cached accessory has them; the accessory and its UUID stay. */
  static detach(api: API, accessory: PlatformAccessory): void {
    const { Service } = api.hap;
    for (const type of [Service.Doorbell, Service.StatelessProgrammableSwitch]) {
      removeService(accessory, type);
    }
  }

  /**
   * An event, not a state: every ring notifies, even the same press twice in a row. Without `chime`
   * only the switch fires: automations run, but no HomePod chimes and no phone announces the ring.
   */
  ring(chime: boolean): void {
    const { ProgrammableSwitchEvent } = this.api.hap.Characteristic;
    for (const service of chime ? [this.doorbell, this.pressSwitch] : [this.pressSwitch]) {
      service.getCharacteristic(ProgrammableSwitchEvent).sendEventNotification(ProgrammableSwitchEvent.SINGLE_PRESS);
    }
  }
}
