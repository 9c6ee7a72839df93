import type { API, PlatformAccessory, Service, WithUUID } from 'homebridge';
import { nameService } from './service-name.js';

/** A HAP service class such as `Service.Switch`: constructed with a name and a subtype. */
type ServiceType = WithUUID<new (displayName?: string, subtype?: string) => Service>;

/**
 * The accessory's service of this type and subtype (none: the one without a subtype). Never by type
 * alone: the doorbell carries several MotionSensors and two Switches, each with a state of its own.
 */
export function findService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): Service | undefined {
  return accessory.services.find((service) => service.UUID === type.UUID && (service.subtype || undefined) === subtype);
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

/** Removes the service when a cached accessory has it; the accessory, its UUID and its other services stay. */
export function removeService(accessory: PlatformAccessory, type: ServiceType, subtype?: string): void {
  const service = findService(accessory, type, subtype);
  if (service !== undefined) {
    accessory.removeService(service);
  }
}
