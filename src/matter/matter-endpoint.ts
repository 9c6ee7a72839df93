import type { MatterAccessory, MatterAPI } from 'homebridge';
import { errorMessage, type Logger } from '../log.js';
import { Pauses } from './pauses.js';

/**
 * Homebridge registers Matter devices one after another, each in tens of milliseconds: a few hundred
 * devices on a slow machine fit well within this.
 */
const REGISTRATION_TIMEOUT_MS = 60_000;
const REGISTRATION_POLL_MS = 100;

/** Homebridge applies an update on its next turn; one that has not shown after this has failed. */
const CONFIRM_TIMEOUT_MS = 1_000;
/** Checked on every turn of the event loop at first, since that is when an update shows; then less often. */
const CONFIRM_EAGERLY_MS = 20;
const CONFIRM_POLL_MS = 20;

/** What the device shows and its bridge tells controllers: only what the plugin sets. */
interface Shown {
  occupied: boolean;
  reachable: boolean;
}

/**
 * One Matter device of the bridge, from its registration on. Homebridge's registration returns before
 * the device exists, and an update sent before then is dropped, so the device keeps what it should
 * show and shows it once Homebridge answers for it. Every update is confirmed by reading it back:
 * Homebridge 2.1.0 resolves a failed update too.
 */
export class MatterEndpoint {
  private readonly pauses = new Pauses();
  private readonly desired: Shown = { occupied: false, reachable: false };
  private registered = false;
  /** What the plugin put in the context: Homebridge swaps the cached context in at registration. */
  private readonly context: MatterAccessory['context'];

  constructor(
    private readonly matter: MatterAPI,
    readonly definition: MatterAccessory,
    private readonly log: Logger,
    /** Renamed in the config since it was cached: its node label is written anew once registered. */
    private readonly renamed = false,
  ) {
    this.context = { ...definition.context };
  }

  get uuid(): string {
    return this.definition.UUID;
  }

  get name(): string {
    return this.definition.displayName;
  }

  /**
   * Waits until Homebridge answers for the device, then shows what it should: a cached device comes
   * back with its last occupancy, and every registration makes a device reachable again. False when
   * Homebridge did not register it in time; true too when the plugin stopped meanwhile.
   */
  async whenRegistered(): Promise<boolean> {
    const deadline = performance.now() + REGISTRATION_TIMEOUT_MS;
    while ((await this.matter.getAccessoryState(this.uuid, 'bridgedDeviceBasicInformation')) === undefined) {
      if (performance.now() > deadline) {
        return false;
      }
      if (!(await this.pauses.pause(REGISTRATION_POLL_MS))) {
        return true;
      }
    }
    this.registered = true;
    // Homebridge keeps the cached context object, which it saves with its cache: written into, it
    // holds the doorbell's current name for a start whose config cannot be used.
    Object.assign(this.definition.context, this.context);
    if (this.definition.clusters?.occupancySensing !== undefined) {
      void this.showOccupied(performance.now());
    }
    void this.showReachable();
    if (this.renamed) {
      // Homebridge 2.4 keeps a cached device's endpoint, node label included, when it is registered again.
      void this.update('bridgedDeviceBasicInformation', { nodeLabel: this.name }, (state) => state.nodeLabel === this.name);
    }
    return true;
  }

  /** `since`: when the alert that caused it was accepted, for the debug line's timing. */
  setOccupied(occupied: boolean, since = performance.now()): void {
    if (this.desired.occupied !== occupied) {
      this.desired.occupied = occupied;
      void this.showOccupied(since);
    }
  }

  setReachable(reachable: boolean): void {
    if (this.desired.reachable !== reachable) {
      this.desired.reachable = reachable;
      void this.showReachable();
    }
  }

  /** A single press: pressed, then released, at position 1. A press before registration has nowhere to go. */
  press(): void {
    if (!this.registered) {
      this.log.debug(`Matter: ${this.name} is not registered yet; a ring is not shown there`);
      return;
    }
    // Both are sent at once: Homebridge applies them in order, and the switch reports each.
    void Promise.all([this.matter.switch.emit(this.uuid, 'press'), this.matter.switch.emit(this.uuid, 'release')]).catch((error: unknown) =>
      this.log.debug(`Matter: a ring at ${this.name} could not be shown: ${errorMessage(error)}`),
    );
  }

  dispose(): void {
    this.pauses.dispose();
  }

  private async showOccupied(since: number): Promise<void> {
    const occupied = this.desired.occupied;
    const shown = await this.update('occupancySensing', { occupancy: { occupied } }, (state) => {
      const occupancy = state.occupancy as { occupied?: boolean } | undefined;
      return occupancy?.occupied === occupied;
    });
    if (shown && occupied === this.desired.occupied) {
      this.log.debug(`Matter: ${this.name} ${occupied ? 'occupied' : 'clear'}, ${(performance.now() - since).toFixed(1)} ms after the change`);
    }
  }

  private async showReachable(): Promise<void> {
    const reachable = this.desired.reachable;
    await this.update('bridgedDeviceBasicInformation', { reachable }, (state) => state.reachable === reachable);
  }

  /** True once the device shows the update; false when it was not registered yet, failed, or the plugin stopped. */
  private async update(cluster: string, attributes: Record<string, unknown>, shows: (state: Record<string, unknown>) => boolean): Promise<boolean> {
    if (!this.registered) {
      return false;
    }
    try {
      await this.matter.updateAccessoryState(this.uuid, cluster, attributes);
      const started = performance.now();
      while (!this.pauses.disposed) {
        const state = await this.matter.getAccessoryState(this.uuid, cluster);
        if (state !== undefined && shows(state)) {
          return true;
        }
        const waited = performance.now() - started;
        if (waited > CONFIRM_TIMEOUT_MS || !(await this.pauses.pause(waited < CONFIRM_EAGERLY_MS ? 0 : CONFIRM_POLL_MS))) {
          break;
        }
      }
      this.log.debug(`Matter: ${this.name} does not show its ${cluster} update`);
    } catch (error) {
      this.log.debug(`Matter: ${this.name} could not be updated: ${errorMessage(error)}`);
    }
    return false;
  }
}
