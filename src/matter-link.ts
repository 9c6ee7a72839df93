import type { API, MatterAccessory } from 'homebridge';
import type { DoorbellAccessory } from './accessories/doorbell-accessory.js';
import type { DoorbellSettings } from './config/parse-config.js';
import { errorMessage, type Logger } from './log.js';
import type * as MatterModule from './matter/matter-doorbells.js';
import type { MatterDoorbells } from './matter/matter-doorbells.js';
import type { MatterTiming } from './matter/registration-wait.js';

/** The code of `matter/`, loaded only for a bridge with Matter on. */
export type MatterLoader = () => Promise<typeof MatterModule>;

const loadMatterModule: MatterLoader = () => import('./matter/matter-doorbells.js');

/**
 * The platform's way to the doorbells' Matter devices, for a bridge with Matter on. The code of
 * `matter/` is loaded then and only then, so a bridge without Matter (and Homebridge 1) runs none of it.
 * Calls made while it loads wait their turn, in order. A Matter failure is logged and goes no
 * further: HomeKit never waits for Matter.
 */
export class MatterLink {
  private constructor(
    private readonly loaded: Promise<MatterDoorbells | undefined>,
    private readonly log: Logger,
  ) {}

  /** Undefined unless the bridge publishes over Matter. `timing`: `matter/`'s own when absent. */
  static forBridge(api: API, log: Logger, load: MatterLoader = loadMatterModule, timing?: MatterTiming): MatterLink | undefined {
    const matter = api.matter;
    if (api.isMatterEnabled?.() !== true || matter === undefined) {
      return undefined;
    }
    const loaded = load().then(
      ({ MatterDoorbells }) => new MatterDoorbells(api, matter, log, timing),
      (error: unknown) => {
        log.warn(`Matter: the doorbells cannot be published over Matter: ${errorMessage(error)}`);
        return undefined;
      },
    );
    return new MatterLink(loaded, log);
  }

  restore(accessory: MatterAccessory): void {
    this.then((doorbells) => doorbells.restore(accessory));
  }

  publish(doorbells: readonly DoorbellSettings[], options: { complete: boolean; alerts?: boolean; batteries?: ReadonlyMap<string, number> }): void {
    this.then((matter) => matter.publish(doorbells, options));
  }

  /** The Doorbell Alerts sensor's state: open while alerts do not flow. */
  showAlerts(open: boolean): void {
    this.then((doorbells) => doorbells.showAlerts(open));
  }

  showUnavailable(): void {
    this.then((doorbells) => doorbells.showUnavailable());
  }

  /** The doorbell's Matter devices follow its HomeKit accessory: they are told of every change it shows. */
  follow(accessory: DoorbellAccessory, deviceId: string): void {
    accessory.onChange((change) => this.then((doorbells) => doorbells.doorbell(deviceId)?.follow(change)));
  }

  dispose(): void {
    this.then((doorbells) => doorbells.dispose());
  }

  private then(action: (doorbells: MatterDoorbells) => void): void {
    void this.loaded
      .then((doorbells) => {
        if (doorbells !== undefined) {
          action(doorbells);
        }
      })
      .catch((error: unknown) => this.log.warn(`Matter: ${errorMessage(error)}`));
  }
}
