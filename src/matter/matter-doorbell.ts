import type { DoorbellChange } from '../accessories/doorbell-accessory.js';
import type { Detection } from '../values/detection.js';
import type { MatterEndpoint } from './matter-endpoint.js';

/** One doorbell's Matter devices: the main occupancy sensor, the button, a sensor per detection. */
interface MatterDoorbellDevices {
  motion: MatterEndpoint;
  button?: MatterEndpoint;
  detections: ReadonlyMap<Detection, MatterEndpoint>;
}

/**
 * One doorbell's Matter devices, following its HomeKit accessory: each occupancy sensor as its
 * motion sensor shows motion (so the Motion Alerts switch silences both), unreachable while it shows
 * a fault, the button's press at every ring (the Chime switch is HomeKit's alone). A ring never
 * changes occupancy.
 */
export class MatterDoorbell {
  constructor(private readonly devices: MatterDoorbellDevices) {}

  follow(change: DoorbellChange): void {
    const { motion, button, detections } = this.devices;
    switch (change.type) {
      case 'motion':
        (change.sensor === 'main' ? motion : detections.get(change.sensor))?.setOccupied(change.detected, change.since);
        break;
      case 'ring':
        button?.press();
        break;
      case 'fault':
        this.endpoints().forEach((endpoint) => endpoint.setReachable(!change.faulted));
        break;
      case 'control':
        // What a switch changes reaches Matter as the motion it stops or clears.
        break;
    }
  }

  private endpoints(): MatterEndpoint[] {
    const { motion, button, detections } = this.devices;
    return [motion, ...(button === undefined ? [] : [button]), ...detections.values()];
  }
}
