import type { DoorbellChange } from '../accessories/doorbell-accessory.js';
import type { MatterEndpoint } from './matter-endpoint.js';

/**
 * One doorbell's Matter devices, following its HomeKit accessory: occupancy as its motion sensor
 * shows motion (so the Motion Alerts switch silences both), unreachable while it shows a fault, the
 * button's press at every ring (the Chime switch is HomeKit's alone). A ring never changes occupancy.
 */
export class MatterDoorbell {
  constructor(
    private readonly motion: MatterEndpoint,
    private readonly button: MatterEndpoint | undefined,
  ) {}

  follow(change: DoorbellChange): void {
    switch (change.type) {
      case 'motion':
        if (change.sensor === 'main') {
          this.motion.setOccupied(change.detected);
        }
        break;
      case 'ring':
        this.button?.press();
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
    return this.button === undefined ? [this.motion] : [this.motion, this.button];
  }
}
