import type { API, CharacteristicValue, PlatformAccessory, Service } from 'homebridge';
import { CONTROLS, offUntilKey, type Control } from '../values/controls.js';
import { cleanName } from './names.js';
import { namedService, removeService } from './services.js';

/** Node's setTimeout fires at once for a delay above this (about 24.8 days): a longer wait is waited in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How a switch changed: turned by a controller (by hand, Siri or an automation), or on again by
 * itself because its minutes off ran out (while the plugin ran, or while Homebridge was down).
 */
export type SwitchTurn = 'turned' | 'on-again';

/**
 * A Switch in the Home app that the household turns on and off, by hand or in automations
 * ("motion alerts off while we are home"). On by default. Its state is kept in the accessory's
 * context, which Homebridge saves with its cache, so it stays as it was left across restarts. Reads
 * are answered from memory, never from the network.
 *
 * With its minutes set, a switch turned off turns itself on again that many minutes later (a nap, a
 * party). Within a run the wait is timed by timers and `performance.now()`, which a wall clock set
 * forward or back does not move; the wall-clock moment it ends is kept in the context too, so a
 * restart waits only the rest of the time, and a switch whose time ran out while Homebridge was down
 * is on at launch.
 */
export class ControlSwitch {
  private on: boolean;
  /** The timer of a switch off for a while, until it turns itself on again. */
  private timer: NodeJS.Timeout | undefined;
  /** Its time ran out while Homebridge was down, so it was turned on at launch. */
  readonly onAgainAtLaunch: boolean = false;

  private constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    private readonly control: Control,
    private readonly service: Service,
    /** How long the switch, turned off, stays off; undefined: until turned on. */
    private readonly offMs: number | undefined,
    private readonly onChange: (on: boolean, how: SwitchTurn) => void,
  ) {
    const { On } = api.hap.Characteristic;
    this.on = accessory.context[CONTROLS[control].contextKey] !== false;
    service.getCharacteristic(On).onGet(() => this.on);
    // HAP itself shows a controller's write to the other controllers.
    service.getCharacteristic(On).onSet((value: CharacteristicValue) => this.turn(value === true));
    if (this.on || offMs === undefined) {
      // Minutes taken out of the settings: an off switch stays off until turned on, so no end is kept.
      delete accessory.context[offUntilKey(control)];
    } else {
      this.onAgainAtLaunch = this.resumeWait(offMs);
    }
    service.updateCharacteristic(On, this.on);
  }

  /** Adds the switch, or takes it over from a cached accessory with its kept state; named after the doorbell. */
  static attach(
    api: API,
    accessory: PlatformAccessory,
    control: Control,
    doorbell: { name: string; deviceId: string; minutes: number | undefined },
    onChange: (on: boolean, how: SwitchTurn) => void,
  ): ControlSwitch {
    const name = cleanName(doorbell.name, doorbell.deviceId, ` ${CONTROLS[control].suffix}`);
    const service = namedService(api, accessory, api.hap.Service.Switch, name, doorbell.deviceId, control);
    const offMs = doorbell.minutes === undefined ? undefined : doorbell.minutes * 60_000;
    return new ControlSwitch(api, accessory, control, service, offMs, onChange);
  }

  /** Removes the switch and forgets its state: added again later, it starts on. */
  static detach(api: API, accessory: PlatformAccessory, control: Control): void {
    removeService(accessory, api.hap.Service.Switch, control);
    delete accessory.context[CONTROLS[control].contextKey];
    delete accessory.context[offUntilKey(control)];
  }

  get isOn(): boolean {
    return this.on;
  }

  /** When the switch, off for a while, turns itself on again (ms since the epoch); undefined while on or off until turned on. */
  get offUntil(): number | undefined {
    const kept: unknown = this.accessory.context[offUntilKey(this.control)];
    return this.timer !== undefined && typeof kept === 'number' ? kept : undefined;
  }

  /** Clears the wait's timer; the end kept in the context stays, for the next launch. */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * A controller's write. Turning it on ends a wait; turning it off starts one, anew even when it was
   * off already ("chime off" said again for a longer nap).
   */
  private turn(on: boolean): void {
    if (on === this.on && (on || this.offMs === undefined)) {
      return;
    }
    this.set(on, 'turned');
  }

  private set(on: boolean, how: SwitchTurn): void {
    this.dispose();
    this.on = on;
    this.accessory.context[CONTROLS[this.control].contextKey] = on;
    if (!on && this.offMs !== undefined) {
      this.accessory.context[offUntilKey(this.control)] = Date.now() + this.offMs;
      this.waitFor(this.offMs);
    } else {
      delete this.accessory.context[offUntilKey(this.control)];
    }
    if (how === 'on-again') {
      // A controller's write shows itself; this change is the plugin's own, so it is pushed.
      this.service.updateCharacteristic(this.api.hap.Characteristic.On, on);
    }
    // Saved to Homebridge's cache now, so a crash or power cut cannot bring back the old state.
    this.api.updatePlatformAccessories([this.accessory]);
    this.onChange(on, how);
  }

  /**
   * At launch, an off switch with minutes: waits the rest of its kept time, or is on at once when it
   * ran out while Homebridge was down. Never longer than its minutes, so a wall clock that was far
   * behind at launch cannot keep it off for good; an end not kept (it was turned off before it had
   * minutes) starts them now. True when it was turned on.
   */
  private resumeWait(offMs: number): boolean {
    const kept: unknown = this.accessory.context[offUntilKey(this.control)];
    const now = Date.now();
    const left = typeof kept === 'number' && Number.isFinite(kept) ? Math.min(kept - now, offMs) : offMs;
    if (left <= 0) {
      this.on = true;
      this.accessory.context[CONTROLS[this.control].contextKey] = true;
      delete this.accessory.context[offUntilKey(this.control)];
      this.api.updatePlatformAccessories([this.accessory]);
      return true;
    }
    if (kept !== now + left) {
      this.accessory.context[offUntilKey(this.control)] = now + left;
      this.api.updatePlatformAccessories([this.accessory]);
    }
    this.waitFor(left);
    return false;
  }

  /** Turns the switch on again `ms` from now, on the monotonic clock. */
  private waitFor(ms: number): void {
    this.waitUntil(performance.now() + ms);
  }

  private waitUntil(endsAt: number): void {
    const left = endsAt - performance.now();
    if (left <= 0) {
      this.set(true, 'on-again');
      return;
    }
    // A timer may fire a fraction of a millisecond before performance.now() reaches its end: it waits that out too.
    this.timer = setTimeout(() => this.waitUntil(endsAt), Math.min(Math.ceil(left), MAX_TIMER_MS));
  }
}
