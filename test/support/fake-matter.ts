/**
 * A stand-in for Homebridge 2's `api.matter`, for in-process tests of what the plugin does when
 * Homebridge's Matter side is slow, refuses or fails. It behaves as Homebridge 2.1.0's does where the
 * plugin can tell: `registerPlatformAccessories` returns at once and the devices are registered later,
 * one after another, in the order given; `getAccessoryState` answers only for a registered device;
 * an update shows on a read after it. The device types are those of the Homebridge devDependency,
 * from the same copy of matter.js it uses. (The real thing is tested end to end, in test/e2e/matter.e2e.test.ts.)
 */
import { ContactSensorDevice } from '@matter/node/devices/contact-sensor';
import { GenericSwitchDevice } from '@matter/node/devices/generic-switch';
import { OccupancySensorDevice } from '@matter/node/devices/occupancy-sensor';
import { BridgedNodeEndpoint } from '@matter/node/endpoints/bridged-node';
import type { API, MatterAccessory, MatterAPI } from 'homebridge';

/** Homebridge's refusal when `api.matter` is there because another bridge of the same Homebridge has Matter on. */
const ANOTHER_BRIDGES_REFUSAL =
  "homebridge-doorbell-motion: Cannot register Matter accessories: Matter is not enabled for this bridge. api.matter is available because another bridge uses Matter, but this bridge has no active 'matter' configuration to register against.";

/**
 * How the fake's registration goes: `registers` as Homebridge does; `refuses` as on a bridge whose
 * Matter is another bridge's; `throws` at once, `rejects` later with an unexpected error; `hangs`
 * (never settles); `never` (resolves, and registers nothing).
 */
export type FakeRegistration = 'registers' | 'refuses' | 'throws' | 'rejects' | 'hangs' | 'never';

export interface FakeMatterOptions {
  registration?: FakeRegistration;
  /** Before the first device is registered, as a bridge busy starting up takes. */
  firstAfterMs?: number;
  /** Between one device's registration and the next. */
  eachAfterMs?: number;
  /** Registers this many devices and stops, as Homebridge does at its device limit. */
  limit?: number;
  /** Removes unregistered devices this long after answering, as Homebridge 2.4 does; at once without it; never with Infinity. */
  removeAfterMs?: number;
}

interface Device {
  definition: MatterAccessory;
  clusters: Record<string, Record<string, unknown>>;
}

export class FakeMatter {
  /** Every call the plugin made, by method, in order: what the tests count. */
  readonly calls: Array<{ method: string; uuid?: string; cluster?: string; answered?: boolean }> = [];
  readonly registered = new Map<string, Device>();
  /** Presses and releases, as `uuid press`. */
  readonly switchEvents: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private queue: MatterAccessory[] = [];
  private registering = false;
  private count = 0;

  constructor(private readonly options: FakeMatterOptions = {}) {}

  /** Makes `api` a Homebridge 2 API with Matter on for this bridge (or, refusing, for another one). */
  install(api: API): void {
    Object.assign(api, { isMatterEnabled: () => true, isMatterAvailable: () => true, matter: this.api() });
  }

  /** Registers devices held back by `limit`, as when Homebridge's registrations move on again. */
  resume(): void {
    this.options.limit = undefined;
    this.registering = true;
    this.registerNext();
  }

  /** Reads of devices Homebridge had not registered (yet): the waste a waiting plugin makes. */
  get unansweredReads(): number {
    return this.calls.filter(({ method, answered }) => method === 'getAccessoryState' && answered === false).length;
  }

  countOf(method: string): number {
    return this.calls.filter((call) => call.method === method).length;
  }

  dispose(): void {
    this.timers.forEach((timer) => clearTimeout(timer));
  }

  private api(): MatterAPI {
    const registration = this.options.registration ?? 'registers';
    const api = {
      deviceTypes: { MotionSensor: OccupancySensorDevice, GenericSwitch: GenericSwitchDevice, ContactSensor: ContactSensorDevice, BridgedNode: BridgedNodeEndpoint },
      registerPlatformAccessories: (_plugin: string, _platform: string, accessories: MatterAccessory[]) => {
        this.calls.push({ method: 'registerPlatformAccessories' });
        switch (registration) {
          case 'refuses':
            return Promise.reject(new Error(ANOTHER_BRIDGES_REFUSAL));
          case 'throws':
            throw new TypeError('Cannot read properties of undefined (reading registerAccessory)');
          case 'rejects':
            return new Promise((_resolve, reject) => this.later(() => reject(new Error('Matter server not started')), 5));
          case 'hangs':
            return new Promise(() => undefined);
          case 'never':
            return Promise.resolve();
          case 'registers':
            this.queue.push(...accessories);
            if (!this.registering) {
              this.registering = true;
              this.later(() => this.registerNext(), this.options.firstAfterMs ?? 0);
            }
            return Promise.resolve();
        }
      },
      unregisterPlatformAccessories: (_plugin: string, _platform: string, accessories: MatterAccessory[]) => {
        this.calls.push({ method: 'unregisterPlatformAccessories' });
        if (registration === 'refuses') {
          return Promise.reject(new Error(ANOTHER_BRIDGES_REFUSAL.replace('register', 'unregister')));
        }
        const remove = () =>
          accessories.forEach(({ UUID }) => {
            this.calls.push({ method: 'unregistered', uuid: UUID });
            this.registered.delete(UUID);
          });
        if (this.options.removeAfterMs === undefined) {
          remove();
        } else if (Number.isFinite(this.options.removeAfterMs)) {
          this.later(remove, this.options.removeAfterMs);
        }
        return Promise.resolve();
      },
      getAccessoryState: (uuid: string, cluster: string) => {
        const state = this.registered.get(uuid)?.clusters[cluster];
        this.calls.push({ method: 'getAccessoryState', uuid, cluster, answered: state !== undefined });
        return Promise.resolve(state === undefined ? undefined : structuredClone(state));
      },
      updateAccessoryState: (uuid: string, cluster: string, attributes: Record<string, unknown>) => {
        this.calls.push({ method: 'updateAccessoryState', uuid, cluster });
        // As Homebridge 2.1.0 does: an update of a device it does not have is dropped, and resolves.
        const device = this.registered.get(uuid);
        if (device !== undefined) {
          device.clusters[cluster] = { ...device.clusters[cluster], ...attributes };
        }
        return Promise.resolve();
      },
      switch: {
        emit: (uuid: string, event: string) => {
          this.calls.push({ method: 'switch.emit', uuid });
          this.switchEvents.push(`${uuid} ${event}`);
          return Promise.resolve();
        },
      },
    };
    // The one cast: only what the plugin uses is faked.
    return api as unknown as MatterAPI;
  }

  private registerNext(): void {
    const limited = this.options.limit !== undefined && this.count >= this.options.limit;
    const next = limited ? undefined : this.queue.shift();
    if (next === undefined) {
      this.registering = false;
      return;
    }
    this.count += 1;
    this.registered.set(next.UUID, {
      definition: next,
      clusters: { ...structuredClone(next.clusters ?? {}), bridgedDeviceBasicInformation: { nodeLabel: next.displayName, reachable: true } },
    });
    this.later(() => this.registerNext(), this.options.eachAfterMs ?? 0);
  }

  private later(action: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }
}
