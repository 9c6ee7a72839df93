import type { API, PlatformAccessory } from 'homebridge';
import type { DoorbellSettings } from '../config/parse-config.js';
import type { Logger } from '../log.js';
import { PLATFORM_NAME, PLUGIN_NAME } from '../settings.js';
import { CONTROLS } from '../values/controls.js';
import { batteryIsLow } from './battery.js';
import { accessoryUuid, DoorbellAccessory, type ListEntry } from './doorbell-accessory.js';
import { cleanName, HOMEKIT_NAME_LENGTH } from './names.js';

/**
 * The plugin's accessories on the bridge: those Homebridge restored from its cache, matched to the
 * configured doorbells at launch without waiting on the network, then looked up by device id.
 */
export class DoorbellAccessories {
  private readonly cached = new Map<string, PlatformAccessory>();
  private readonly byDeviceId = new Map<string, DoorbellAccessory>();
  /** Doorbells whose absence from the account's list was told this run: once is enough. */
  private readonly toldMissing = new Set<string>();

  constructor(
    private readonly api: API,
    private readonly log: Logger,
  ) {}

  /** Homebridge hands over each cached accessory before didFinishLaunching. */
  restore(accessory: PlatformAccessory): void {
    this.cached.set(accessory.UUID, accessory);
  }

  /**
   * Registers new doorbells, renames changed ones (same UUID, so automations survive) and, with
   * `removeStale`, unregisters cached accessories no doorbell claims.
   */
  publish(doorbells: readonly DoorbellSettings[], { removeStale }: { removeStale: boolean }): void {
    const fresh: PlatformAccessory[] = [];
    const renamed: PlatformAccessory[] = [];
    for (const doorbell of doorbells) {
      const uuid = accessoryUuid(this.api, doorbell.deviceId);
      const name = cleanName(doorbell.name, doorbell.deviceId);
      if (name !== doorbell.name) {
        // JSON quotes show a name's control characters as escapes instead of printing them; a name
        // pasted by mistake (thousands of characters) is shown by its start.
        this.log.info(
          `Doorbell ${doorbell.deviceId} ${JSON.stringify(shortened(doorbell.name))} is called "${name}" in HomeKit (a name there has ` +
            `letters, digits, spaces and ’'&!._:;()/,- only, a letter or digit at each end, at most ${HOMEKIT_NAME_LENGTH} characters)`,
        );
      }
      let accessory = this.cached.get(uuid);
      if (accessory === undefined) {
        accessory = new this.api.platformAccessory(name, uuid);
        fresh.push(accessory);
      } else if (accessory.displayName !== name) {
        renamed.push(accessory);
      }
      this.cached.delete(uuid);
      const published = new DoorbellAccessory(this.api, accessory, doorbell);
      published.onAgainAtLaunch.forEach((control) => this.log.info(`${published.name} ${CONTROLS[control].suffix} is on again`));
      this.logControlChanges(published);
      this.logHealthChanges(published);
      this.byDeviceId.set(doorbell.deviceId, published);
    }
    if (fresh.length > 0) {
      this.api.registerPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, fresh);
    }
    if (renamed.length > 0) {
      // The accessory cache keeps the old name until told.
      this.api.updatePlatformAccessories(renamed);
    }
    const stale = [...this.cached.values()];
    if (removeStale && stale.length > 0) {
      this.api.unregisterPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, stale);
      this.log.info(`Removed ${stale.map((accessory) => accessory.displayName).join(', ')}: no longer configured`);
    }
    this.log.info(`Publishing ${doorbells.length} doorbell motion sensor${doorbells.length === 1 ? '' : 's'}`);
  }

  get(deviceId: string): DoorbellAccessory | undefined {
    return this.byDeviceId.get(deviceId);
  }

  forEach(action: (accessory: DoorbellAccessory, deviceId: string) => void): void {
    this.byDeviceId.forEach(action);
  }

  /**
   * The cached accessories no configured doorbell claims (all of them without a usable configuration)
   * are updated by nothing: rather than the state they were saved with, they show no motion and a
   * fault until the configuration is fixed.
   */
  showUnavailable(): void {
    const { Characteristic, Service } = this.api.hap;
    for (const accessory of this.cached.values()) {
      // The detections' sensors too: every MotionSensor, whatever its subtype.
      for (const sensor of accessory.services.filter((service) => service.UUID === Service.MotionSensor.UUID)) {
        sensor
          .updateCharacteristic(Characteristic.MotionDetected, false)
          .updateCharacteristic(Characteristic.StatusFault, Characteristic.StatusFault.GENERAL_FAULT);
      }
    }
  }

  /**
   * A doorbell list read is over: each configured doorbell takes what its entry says, then counts the
   * first read of the run as done (`list` undefined: the read found nothing, which faults nothing). A
   * doorbell the list leaves out is named once a run, and not faulted: a list may leave out what a
   * subscription still serves.
   */
  /**
   * With several accounts, each account's list speaks only of that account's doorbells (`deviceIds`),
   * and its warning goes to the account's own log (`log`), which names it.
   */
  listRead(list: ListedDoorbells | undefined, { deviceIds, log = this.log }: { deviceIds?: ReadonlySet<string>; log?: Logger } = {}): void {
    const own = [...this.byDeviceId].filter(([deviceId]) => deviceIds === undefined || deviceIds.has(deviceId));
    if (list !== undefined) {
      const entries = new Map(list.doorbells.map((doorbell) => [doorbell.deviceId, doorbell]));
      own.forEach(([deviceId, accessory]) => {
        const entry = entries.get(deviceId);
        if (entry !== undefined) {
          accessory.listEntry(entry);
        } else if (!this.toldMissing.has(deviceId)) {
          this.toldMissing.add(deviceId);
          log.warn(`${accessory.name} (${deviceId}) is not among this account's doorbells`);
        }
      });
    }
    own.forEach(([, accessory]) => accessory.listRead());
  }

  /** A battery turning low, and a doorbell going offline, are said once when they change, never at every read. */
  private logHealthChanges(accessory: DoorbellAccessory): void {
    accessory.onChange((change) => {
      if (change.type === 'battery' && change.level !== undefined) {
        const low = batteryIsLow(change.level);
        const wasLow = change.previous !== undefined && batteryIsLow(change.previous);
        if (low && !wasLow) {
          this.log.warn(`${accessory.name}'s battery is at ${change.level} %`);
        } else if (!low && wasLow) {
          this.log.info(`${accessory.name}'s battery is no longer low (${change.level} %)`);
        }
      } else if (change.type === 'online' && change.online === false) {
        this.log.warn(`${accessory.name} is offline in the doorbell service (check its Wi-Fi or power)`);
      } else if (change.type === 'online' && change.online === true && change.wasOffline) {
        this.log.info(`${accessory.name} is online again in the doorbell service`);
      }
    });
  }

  /** A switch turned in the Home app, by hand or by an automation, is worth a line: it changes what alerts do. */
  private logControlChanges(accessory: DoorbellAccessory): void {
    accessory.onChange((change) => {
      if (change.type !== 'control') {
        return;
      }
      if (change.how === 'on-again') {
        this.log.info(`${accessory.name} ${CONTROLS[change.control].suffix} is on again`);
      } else {
        const until = change.offUntil === undefined ? '' : ` until ${clockTime(change.offUntil)}`;
        this.log.info(`${CONTROLS[change.control].inLog} at ${accessory.name} turned ${change.on ? 'on' : 'off'}${until}`);
      }
    });
  }

  /** Clears every pending end of motion. */
  dispose(): void {
    this.byDeviceId.forEach((accessory) => accessory.dispose());
  }
}

/** What the account's doorbell list holds, as far as the accessories read it. */
export interface ListedDoorbells {
  doorbells: ReadonlyArray<ListEntry & { deviceId: string }>;
}

/**
 * "14:30" on the host's clock: when a switch off for a while turns on again. Minutes cut, not rounded,
 * so the switch is never on before the time the line gives.
 */
function clockTime(ms: number): string {
  const date = new Date(ms);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

/** The most of a configured name a log line quotes. */
const QUOTED_NAME_LENGTH = 100;

function shortened(name: string): string {
  return name.length <= QUOTED_NAME_LENGTH ? name : `${name.slice(0, QUOTED_NAME_LENGTH)}…`;
}
