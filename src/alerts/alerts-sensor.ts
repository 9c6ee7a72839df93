import type { API, PlatformAccessory, Service } from 'homebridge';
import { describeAccessory, forgetOptionalTypes, namedService } from '../accessories/services.js';

/** The accessory's name, and its service's: a user turns on its notifications in the Home app by it. */
export const ALERTS_SENSOR_NAME = 'Doorbell Alerts';

/** Its serial number, and the id its name is cleaned for. */
const SERIAL_NUMBER = 'alerts';

/** One per bridge, whatever the doorbells: its automations and notifications survive any change to them. */
export function alertsSensorUuid(api: API): string {
  return api.hap.uuid.generate('doorbell-motion:alerts');
}

/**
 * The Doorbell Alerts accessory: a ContactSensor that is closed while alerts flow and open, with a
 * fault, while they do not, so the Home app says "Doorbell Alerts opened" when they stop. It shows
 * what the cache held until told otherwise, so a restart never makes it blink, and answers from memory.
 */
export class AlertsSensor {
  private readonly service: Service;
  private open: boolean;

  constructor(
    private readonly api: API,
    accessory: PlatformAccessory,
  ) {
    const { Characteristic, Service } = api.hap;
    describeAccessory(api, accessory, 'Alerts', SERIAL_NUMBER, ALERTS_SENSOR_NAME);
    this.service = namedService(api, accessory, Service.ContactSensor, ALERTS_SENSOR_NAME, SERIAL_NUMBER);
    const state = this.service.getCharacteristic(Characteristic.ContactSensorState);
    this.open = state.value === Characteristic.ContactSensorState.CONTACT_NOT_DETECTED;
    state.onGet(() => this.stateValue());
    this.service.getCharacteristic(Characteristic.StatusFault).onGet(() => this.faultValue());
    this.show(this.open);
    // Every characteristic it carries is there now.
    accessory.services.forEach(forgetOptionalTypes);
  }

  /** What it shows now: at launch, what the cache held. */
  get isOpen(): boolean {
    return this.open;
  }

  show(open: boolean): void {
    const { ContactSensorState, StatusFault } = this.api.hap.Characteristic;
    this.open = open;
    this.service.updateCharacteristic(ContactSensorState, this.stateValue()).updateCharacteristic(StatusFault, this.faultValue());
  }

  private stateValue(): number {
    const { CONTACT_DETECTED, CONTACT_NOT_DETECTED } = this.api.hap.Characteristic.ContactSensorState;
    return this.open ? CONTACT_NOT_DETECTED : CONTACT_DETECTED;
  }

  private faultValue(): number {
    const { GENERAL_FAULT, NO_FAULT } = this.api.hap.Characteristic.StatusFault;
    return this.open ? GENERAL_FAULT : NO_FAULT;
  }
}
