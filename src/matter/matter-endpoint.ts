import type { MatterAccessory, MatterAPI } from 'homebridge';
import { errorMessage, type Logger } from '../log.js';
import { hasOtherFeatures, serverClusterOf, type MatterRole } from './matter-devices.js';
import type { Pauses } from './registration-wait.js';

/** Homebridge applies an update on its next turn; one that has not shown after this has failed. */
const CONFIRM_TIMEOUT_MS = 1_000;
/** Checked on every turn of the event loop at first, since that is when an update shows; then less often. */
const CONFIRM_EAGERLY_MS = 20;
const CONFIRM_POLL_MS = 20;

/** What the device shows and its bridge tells controllers: only what the plugin sets. */
interface Shown {
  occupied: boolean;
  reachable: boolean;
  /** A contact sensor's: closed while alerts flow. */
  closed: boolean;
}

/**
 * One Matter device of the bridge, from its registration on. Homebridge's registration returns before
 * the device exists, and an update sent before then is dropped, so the device keeps what it should
 * show and shows it once Homebridge answers for it (see MatterDoorbells). Every update is confirmed by
 * reading it back: Homebridge 2.1.0 resolves a failed update too. Nothing is sent once the plugin
 * stopped.
 */
export class MatterEndpoint {
  private readonly desired: Shown;
  private registered = false;
  /** What the plugin put in the context: Homebridge swaps the cached context in at registration. */
  private readonly context: MatterAccessory['context'];

  constructor(
    private readonly matter: MatterAPI,
    readonly definition: MatterAccessory,
    private readonly role: MatterRole,
    /** The plugin's pauses, ended when it stops. */
    private readonly pauses: Pauses,
    private readonly log: Logger,
    /** Renamed in the config since it was cached: its node label is written anew once registered. */
    private readonly renamed = false,
  ) {
    this.context = { ...definition.context };
    // A doorbell's devices are unreachable until it is confirmed; the alerts sensor is what reports
    // an outage, so it is always reachable.
    this.desired = { occupied: false, reachable: role === 'alerts', closed: true };
  }

  get uuid(): string {
    return this.definition.UUID;
  }

  get name(): string {
    return this.definition.displayName;
  }

  /**
   * Whether Homebridge answers for the device as the plugin registered it. Homebridge 2.4 also answers
   * for a device it brought back from its cache, built from the base device type of its name, until
   * the plugin's registration replaces it: that one has other features (see matter-devices.ts).
   */
  async isRegistered(): Promise<boolean> {
    const state = await this.stateOf(serverClusterOf(this.role));
    return state !== undefined && !hasOtherFeatures(this.role, state);
  }

  /**
   * Homebridge answers for the device: it shows what it should. A cached device comes back with its
   * last occupancy, and every registration makes a device reachable again.
   */
  showOnceRegistered(): void {
    this.registered = true;
    // Homebridge keeps the cached context object, which it saves with its cache: written into, it
    // holds the doorbell's current name for a start whose config cannot be used.
    Object.assign(this.definition.context, this.context);
    if (serverClusterOf(this.role) === 'occupancySensing') {
      void this.showOccupied(performance.now());
    } else if (serverClusterOf(this.role) === 'booleanState') {
      void this.showClosed();
    }
    void this.showReachable();
    if (this.renamed) {
      // Homebridge 2.4 keeps a cached device's endpoint, node label included, when it is registered again.
      void this.update('bridgedDeviceBasicInformation', { nodeLabel: this.name }, (state) => state.nodeLabel === this.name);
    }
  }

  /** `since`: when what caused it happened (a motion alert accepted, say), for the debug line's timing. */
  setOccupied(occupied: boolean, since: number): void {
    if (this.desired.occupied !== occupied) {
      this.desired.occupied = occupied;
      void this.showOccupied(since);
    }
  }

  /** A contact sensor's state: closed (true) or open. */
  setClosed(closed: boolean): void {
    if (this.desired.closed !== closed) {
      this.desired.closed = closed;
      void this.showClosed();
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
    if (!this.registered || this.pauses.disposed) {
      this.log.debug(`Matter: ${this.name} is not registered${this.registered ? ' any more' : ' yet'}; a ring is not shown there`);
      return;
    }
    void this.emitPress();
  }

  private async showOccupied(since: number): Promise<void> {
    const occupied = this.desired.occupied;
    const shown = await this.update('occupancySensing', { occupancy: { occupied } }, (state) => {
      const occupancy = state.occupancy as { occupied?: boolean } | undefined;
      return occupancy?.occupied === occupied;
    });
    if (shown && occupied === this.desired.occupied) {
      const after = occupied ? 'the motion alert was accepted' : 'the change';
      this.log.debug(`Matter: ${this.name} ${occupied ? 'occupied' : 'clear'}, ${(performance.now() - since).toFixed(1)} ms after ${after}`);
    }
  }

  private async showClosed(): Promise<void> {
    const stateValue = this.desired.closed;
    await this.update('booleanState', { stateValue }, (state) => state.stateValue === stateValue);
  }

  private async showReachable(): Promise<void> {
    const reachable = this.desired.reachable;
    await this.update('bridgedDeviceBasicInformation', { reachable }, (state) => state.reachable === reachable);
  }

  private async emitPress(): Promise<void> {
    try {
      // Both are sent at once: Homebridge applies them in order, and the switch reports each.
      await Promise.all([this.matter.switch.emit(this.uuid, 'press'), this.matter.switch.emit(this.uuid, 'release')]);
    } catch (error) {
      this.log.debug(`Matter: a ring at ${this.name} could not be shown: ${errorMessage(error)}`);
    }
  }

  /** Homebridge's state of a cluster of the device; undefined when it has none, or the read failed. */
  private async stateOf(cluster: string): Promise<Record<string, unknown> | undefined> {
    try {
      return await this.matter.getAccessoryState(this.uuid, cluster);
    } catch (error) {
      this.log.debug(`Matter: reading ${this.name}'s ${cluster} failed: ${errorMessage(error)}`);
      return undefined;
    }
  }

  /** True once the device shows the update; false when it was not registered yet, failed, or the plugin stopped. */
  private async update(cluster: string, attributes: Record<string, unknown>, shows: (state: Record<string, unknown>) => boolean): Promise<boolean> {
    if (!this.registered || this.pauses.disposed) {
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
