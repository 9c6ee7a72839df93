import type { API, Service } from 'homebridge';
import { cleanName } from './names.js';

/**
 * Names a service of a doorbell's accessory: its displayName (what Homebridge's cache keeps), its
 * Name, and its ConfiguredName, the name the Home app shows and lets the user change. ConfiguredName
 * is written from the config only when the configured name changed, so a name the user gave in the
 * Home app survives restarts; the config wins again once its name changes.
 *
 * @param name the service's name, made by `cleanName`
 * @param deviceId the doorbell's device id, as given to `cleanName`
 */
export function nameService(api: API, service: Service, name: string, deviceId: string): void {
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
