import type { API, PlatformAccessory, Service, WithUUID } from 'homebridge';
import { cleanName } from './names.js';

/** A HAP service class such as `Service.Switch`: constructed with a name and a subtype. */
type ServiceType = WithUUID<new (displayName?: string, subtype?: string) => Service>;

/**
 * The accessory's service of this type and subtype (none: the one without a subtype). Never by type
 * alone: the doorbell carries several MotionSensors and two Switches, each with a state of its own.
 */
function findService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): Service | undefined {
  return accessory.services.find((service) => service.UUID === type.UUID && (service.subtype || undefined) === subtype);
}

/** What the Home app shows of an accessory: its maker, model, serial number and name. */
export function describeAccessory(api: API, accessory: PlatformAccessory, model: string, serialNumber: string, name: string): void {
  const { Characteristic, Service } = api.hap;
  accessory.updateDisplayName(name);
  // Every HAP accessory is created with an AccessoryInformation service.
  accessory.getService(Service.AccessoryInformation)!
    .setCharacteristic(Characteristic.Manufacturer, 'Doorbell Motion')
    .setCharacteristic(Characteristic.Model, model)
    .setCharacteristic(Characteristic.SerialNumber, serialNumber)
    .updateCharacteristic(Characteristic.Name, name);
}

/**
 * The service, taken over from a cached accessory (adding a second would throw) or added, named
 * `name` (made by cleanName for the doorbell `deviceId`).
 */
export function namedService(api: API, accessory: PlatformAccessory, type: ServiceType, name: string, deviceId: string, subtype?: string): Service {
  const service = findService(accessory, type, subtype) ?? accessory.addService(new type(name, subtype));
  nameService(api, service, name, deviceId);
  return service;
}

/**
 * Lets go of the service's list of the optional characteristic types it may carry, once it has every
 * characteristic the plugin gives it. HAP-NodeJS keeps a whole Characteristic object for each such type
 * (its props and event emitter, about 0.5 KiB), only to look the type up when a characteristic is first
 * asked for; a doorbell's services list about 20, some 1 MiB with 100 doorbells, and the plugin asks for
 * no new type once a service is set up. One asked for later is still added, with HAP-NodeJS's warning.
 */
export function forgetOptionalTypes(service: Service): void {
  service.optionalCharacteristics = [];
}

/** Removes the service when a cached accessory has it; the accessory, its UUID and its other services stay. */
export function removeService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): void {
  const service = findService(accessory, type, subtype);
  if (service !== undefined) {
    accessory.removeService(service);
  }
}

/**
 * Names a service of a doorbell's accessory: its displayName (what Homebridge's cache keeps), its
 * Name, and its ConfiguredName, the name the Home app shows and lets the user change. ConfiguredName
 * is written from the config only when the configured name changed, so a name the user gave in the
 * Home app survives restarts; the config wins again once its name changes.
 *
 * @param name the service's name, made by `cleanName`
 * @param deviceId the doorbell's device id, as given to `cleanName`
 */
function nameService(api: API, service: Service, name: string, deviceId: string): void {
  const { ConfiguredName, Name } = api.hap.Characteristic;
  const previous = service.displayName;
  service.displayName = name;
  service.updateCharacteristic(Name, name);
  if (!service.testCharacteristic(ConfiguredName)) {
    // Not every service lists ConfiguredName as optional; declaring it avoids HAP's warning.
    service.addOptionalCharacteristic(ConfiguredName);
    service.updateCharacteristic(ConfiguredName, name);
    return;
  }
  // A name this plugin made comes back from cleanName unchanged. One an earlier version gave as
  // configured (`Front Door (Main)`) comes back cleaned, so cleaning alone is not a rename.
  const renamedInConfig = cleanName(previous, deviceId) !== name;
  // Still the name the plugin gave last time, so not the user's: an earlier version's uncleaned one.
  const givenByPlugin = service.getCharacteristic(ConfiguredName).value === previous;
  if (renamedInConfig || givenByPlugin) {
    service.updateCharacteristic(ConfiguredName, name);
  }
}
