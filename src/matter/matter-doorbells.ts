import type { API, MatterAccessory, MatterAPI } from 'homebridge';
import type { DoorbellChange } from '../accessories/doorbell-accessory.js';
import type { DoorbellSettings } from '../config/parse-config.js';
import { errorMessage, type Logger } from '../log.js';
import { PLATFORM_NAME, PLUGIN_NAME } from '../settings.js';
import type { Detection } from '../values/detection.js';
import { ALERTS_CONTEXT, cachedContext, matterAccessory, type MatterContext } from './matter-devices.js';
import { MatterEndpoint } from './matter-endpoint.js';
import { HOMEBRIDGE_DEVICE_LIMIT, MATTER_TIMING, type MatterTiming, Pauses, RegistrationWait } from './registration-wait.js';

/**
 * The doorbells' Matter devices: registered at every launch, and each doorbell's devices following its
 * HomeKit accessory.
 */

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

export interface MatterPublishOptions {
  /** No doorbell entry was left out. */
  complete: boolean;
  /** The Doorbell Alerts sensor is on. */
  alerts?: boolean;
  /**
   * Each battery doorbell's level as the last run left it: a battery first seen during a run shows
   * over Matter from the next launch, since a device's clusters are fixed at its registration.
   */
  batteries?: ReadonlyMap<string, number>;
}

/**
 * The doorbells' devices on the bridge's Matter side. Homebridge hands back cached Matter accessories
 * but publishes them only when the plugin registers the same UUIDs again, so at every launch every
 * device is registered again: a controller keeps its devices and automations across restarts and
 * renames. Doorbells removed from the config, and a button or a detection turned off, are
 * unregistered. A doorbell left out for a bad entry, and every doorbell while the config is invalid,
 * stays registered as unreachable with no occupancy, so that a typo never removes a doorbell from
 * Google Home or Alexa.
 */
export class MatterDoorbells {
  private readonly cached = new Map<string, MatterAccessory>();
  private readonly doorbells = new Map<string, MatterDoorbell>();
  private readonly endpoints: MatterEndpoint[] = [];
  /** Every wait of the Matter devices, ended at shutdown. */
  private readonly pauses = new Pauses();
  private wait: RegistrationWait | undefined;
  /** The Doorbell Alerts contact sensor, when there is one, and whether it shows alerts stopped. */
  private alertsSensor: MatterEndpoint | undefined;
  private alertsOpen = false;

  constructor(
    private readonly api: API,
    private readonly matter: MatterAPI,
    private readonly log: Logger,
    private readonly timing: MatterTiming = MATTER_TIMING,
  ) {}

  /** Homebridge hands over each cached Matter accessory before didFinishLaunching. */
  restore(accessory: MatterAccessory): void {
    this.cached.set(accessory.UUID, accessory);
  }

  /**
   * `complete`: no doorbell entry was left out, so a cached device no doorbell claims is gone for good.
   * `alerts`: the Doorbell Alerts sensor is on.
   */
  publish(doorbells: readonly DoorbellSettings[], { complete, alerts = false, batteries }: MatterPublishOptions): void {
    const configured = new Set(doorbells.map(({ deviceId }) => deviceId));
    for (const doorbell of doorbells) {
      const identity = { deviceId: doorbell.deviceId, doorbellName: doorbell.name };
      const motion = this.endpoint({ ...identity, role: 'motion' }, batteries?.get(doorbell.deviceId));
      const button = doorbell.button ? this.endpoint({ ...identity, role: 'button' }) : undefined;
      const detections = new Map(doorbell.detections.map((detection) => [detection, this.endpoint({ ...identity, role: detection })]));
      this.doorbells.set(doorbell.deviceId, new MatterDoorbell({ motion, button, detections }));
    }
    if (alerts) {
      this.endpoint(ALERTS_CONTEXT);
    }
    const unclaimed = [...this.cached.values()].filter(({ UUID }) => !this.endpoints.some(({ uuid }) => uuid === UUID));
    const [kept, removed] = partition(unclaimed, (accessory) => {
      const context = cachedContext(accessory);
      return !complete && context !== undefined && context.role !== 'alerts' && !configured.has(context.deviceId);
    });
    kept.forEach((accessory) => this.keepUnavailable(accessory));
    void this.register(removed, `Publishing ${doorbells.length} doorbell${doorbells.length === 1 ? '' : 's'} over Matter too`);
  }

  /**
   * Without a usable config nothing updates the cached doorbells' devices: they are registered again,
   * unreachable and with no occupancy, until the config is fixed. A cached Doorbell Alerts sensor is
   * registered again too, reachable: it is what tells of the outage.
   */
  showUnavailable(): void {
    this.cached.forEach((accessory) => this.keepUnavailable(accessory));
    void this.register([]);
  }

  /** The Doorbell Alerts sensor shows alerts stopped (open) or flowing (closed). */
  showAlerts(open: boolean): void {
    this.alertsOpen = open;
    this.alertsSensor?.setClosed(!open);
  }

  /** The doorbell's devices, to follow its HomeKit accessory; undefined for one not published. */
  doorbell(deviceId: string): MatterDoorbell | undefined {
    return this.doorbells.get(deviceId);
  }

  /** Stops every wait for a registration or a confirmation: nothing reaches Homebridge's Matter side after this. */
  dispose(): void {
    this.pauses.dispose();
    this.wait?.dispose();
  }

  private endpoint(identity: MatterContext, batteryPercent?: number): MatterEndpoint {
    const definition = matterAccessory(this.api, this.matter, identity, batteryPercent);
    const cached = this.cached.get(definition.UUID);
    const renamed = cached !== undefined && cached.displayName !== definition.displayName;
    const endpoint = new MatterEndpoint(this.matter, definition, identity.role, this.pauses, this.log, renamed);
    this.endpoints.push(endpoint);
    if (identity.role === 'alerts') {
      this.alertsSensor = endpoint;
      endpoint.setClosed(!this.alertsOpen);
    }
    return endpoint;
  }

  private keepUnavailable(cached: MatterAccessory): void {
    const context = cachedContext(cached);
    if (context !== undefined) {
      this.endpoint(context);
    }
  }

  /**
   * Unregisters `removed`, registers every endpoint, and shows each one's state once it exists. Homebridge
   * registers them one after another, in the order given, and answers for each once it has: the wait
   * asks about one device at a time, the first not registered yet. `announce` is logged once Homebridge
   * has taken the registration, so a bridge without Matter of its own (which refuses it) logs nothing
   * about it.
   */
  private async register(removed: readonly MatterAccessory[], announce?: string): Promise<void> {
    const wait = new RegistrationWait(
      this.endpoints.map(({ name }) => name),
      this.pauses,
      this.log,
      this.timing,
    );
    this.wait = wait;
    try {
      if (removed.length > 0) {
        await this.matter.unregisterPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, [...removed]);
        this.log.info(`Removed ${removed.map(({ displayName }) => displayName).join(', ')} from Matter: no longer configured`);
        // Homebridge answers before it has removed them, and works on each call apart: registering now
        // would have it change the bridge's device list from two calls at once, and one of them gives up
        // on the lock ("Failed to notify controllers of parts list change"). So the registration waits
        // until Homebridge answers for none of them, and then a moment more: it forgets a device before
        // it tells the controllers, and says nothing when that is done.
        if (!(await this.untilRemoved(removed))) {
          return;
        }
      }
      if (this.endpoints.length > 0) {
        await this.matter.registerPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, this.endpoints.map(({ definition }) => definition));
        if (announce !== undefined) {
          this.log.info(announce);
        }
      }
      if (this.endpoints.length > HOMEBRIDGE_DEVICE_LIMIT) {
        this.log.warn(`Matter: the doorbells have ${this.endpoints.length} Matter devices, and Homebridge registers at most ${HOMEBRIDGE_DEVICE_LIMIT} on a bridge`);
      }
      for (const endpoint of this.endpoints) {
        if (!(await wait.until(() => endpoint.isRegistered(), endpoint.name))) {
          return;
        }
        endpoint.showOnceRegistered();
        wait.progressed();
      }
    } catch (error) {
      wait.dispose();
      if (ANOTHER_BRIDGES_MATTER.test(errorMessage(error))) {
        // Matter is on for another bridge of this Homebridge (a child bridge), not for this one.
        this.log.debug(`Matter: not on for this bridge, so the doorbells are in HomeKit only: ${errorMessage(error)}`);
      } else {
        this.log.warn(`Matter: the doorbells could not be published: ${errorMessage(error)}`);
      }
    }
  }

  /**
   * Resolves true REMOVAL_SETTLE_MS after Homebridge answers for none of `removed` (asked at once and
   * then after growing pauses), or once it has had REMOVAL_WAIT_MS to remove them (it logged why it
   * could not): the registration goes ahead all the same. False when the plugin stopped meanwhile.
   */
  private async untilRemoved(removed: readonly MatterAccessory[]): Promise<boolean> {
    const started = performance.now();
    for (let pause = this.timing.firstCheckMs; !(await this.allGone(removed)); pause = Math.min(pause * 2, this.timing.longestCheckMs)) {
      if (performance.now() - started >= REMOVAL_WAIT_MS) {
        this.log.debug(`Matter: Homebridge still has ${removed.map(({ displayName }) => displayName).join(', ')}; registering the others all the same`);
        return !this.pauses.disposed;
      }
      if (!(await this.pauses.pause(pause))) {
        return false;
      }
    }
    return this.pauses.pause(REMOVAL_SETTLE_MS);
  }

  /** Whether Homebridge answers for none of `accessories`: it has removed them, or never had them. */
  private async allGone(accessories: readonly MatterAccessory[]): Promise<boolean> {
    const states = await Promise.all(
      accessories.map(async ({ UUID }) => {
        try {
          return await this.matter.getAccessoryState(UUID, 'bridgedDeviceBasicInformation');
        } catch {
          // A read that fails tells nothing to wait for: the registration goes ahead.
          return undefined;
        }
      }),
    );
    return states.every((state) => state === undefined);
  }
}

/** Homebridge removes a device in milliseconds; one still there after this is not waited for any longer. */
const REMOVAL_WAIT_MS = 10_000;

/**
 * After Homebridge has forgotten the removed devices, how long its word to the controllers is given
 * (milliseconds of work, which it retries for about 200 ms when another change holds the lock), so
 * that the registration never contends with it. Only a launch that removed devices waits for it.
 */
const REMOVAL_SETTLE_MS = 1_000;

/**
 * How Homebridge refuses a registration when `api.matter` is there only because another bridge of the
 * same Homebridge has Matter on: nothing to warn about on this one.
 */
const ANOTHER_BRIDGES_MATTER = /Matter is not enabled for this bridge/i;

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}
