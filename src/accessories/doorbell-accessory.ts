import type { API, PlatformAccessory, Service } from 'homebridge';
import type { DoorbellSettings } from '../config/parse-config.js';
import { CONTROL_SUBTYPES, CONTROLS, offUntilKey, type Control, type OffUntilKey, type Silenced } from '../values/controls.js';
import { DETECTION_SUFFIXES, DETECTIONS, type Detection } from '../values/detection.js';
import { batteryLevel, BatteryPart } from './battery.js';
import { ControlSwitch, type SwitchTurn } from './control-switch.js';
import { DoorbellButton } from './doorbell-button.js';
import { MotionSensor } from './motion-sensor.js';
import { cleanName } from './names.js';
import { describeAccessory, forgetOptionalTypes, namedService, removeService } from './services.js';

/** Derived from the device id alone, so a renamed doorbell keeps its UUID and its automations. */
export function accessoryUuid(api: API, deviceId: string): string {
  return api.hap.uuid.generate(`doorbell-motion:${deviceId}`);
}

/**
 * What a ring did: chimed (the Doorbell service and the switch), ran automations only (Chime off), or
 * nothing: no button, or `too-soon` after the last press.
 */
type RingOutcome = 'chimed' | 'silent' | 'no-button' | 'too-soon';

/**
 * A doorbell presses in HomeKit at most once in this long. A visitor pressing three times chimes once,
 * and a flood of forged rings cannot ring the house's HomePods a hundred times.
 */
export const MIN_RING_INTERVAL_MS = 5_000;

/** When a ring reached the plugin, and, through a relay, when it reached the relay. */
interface RingTimes {
  /** On `performance.now()`'s clock. */
  at: number;
  /** The relay's `time` of the message, in unix seconds; undefined for a direct delivery. */
  relayTime: number | undefined;
}

/**
 * Whether a ring comes too soon after the last press. Through a relay, the relay's own times decide,
 * which no sender can forge: rings held back while the home was cut off from the relay arrive together,
 * yet two visitors 10 s apart both press. A relay time that is not later than the last press's (a
 * flood within one relay second, a relay clock set back) tells nothing, so arrival decides, as it does
 * for a direct delivery.
 */
function tooSoon(ring: RingTimes, lastPress: RingTimes): boolean {
  if (ring.relayTime !== undefined && lastPress.relayTime !== undefined && ring.relayTime > lastPress.relayTime) {
    return (ring.relayTime - lastPress.relayTime) * 1000 < MIN_RING_INTERVAL_MS;
  }
  return ring.at - lastPress.at < MIN_RING_INTERVAL_MS;
}

/**
 * A change of the doorbell's state, for whoever shows the doorbell beside HomeKit (and for the log).
 * A motion's `since` is when its cause happened, on `performance.now()`'s clock: the motion alert
 * accepted, the motion timeout run out, the Motion Alerts switch turned off.
 */
export type DoorbellChange =
  | { type: 'motion'; sensor: 'main' | Detection; detected: boolean; since: number }
  | { type: 'control'; control: Control; on: boolean; how: SwitchTurn; offUntil: number | undefined }
  | { type: 'ring'; outcome: 'chimed' | 'silent' }
  | { type: 'fault'; faulted: boolean }
  | { type: 'battery'; level: number | undefined; previous: number | undefined }
  | { type: 'online'; online: boolean | undefined; wasOffline: boolean };

/**
 * What the doorbell service last said of the doorbell: its battery level (a whole percentage; null
 * when there is none to show), whether it reaches the doorbell (null when it did not say), and since
 * when it has not (ms since the epoch).
 */
export interface DoorbellHealth {
  battery: number | null;
  online: boolean | null;
  offlineSince: number | undefined;
}

/** What a doorbell list entry says of the doorbell: see AccountDoorbell. */
export interface ListEntry {
  battery?: number | null;
  online?: boolean;
}

/**
 * One doorbell as a HomeKit accessory: its main MotionSensor (the primary service), a MotionSensor
 * per configured detection, and, as configured, a doorbell button and the Motion Alerts and Chime
 * switches. The platform hands it each motion and ring; it decides, by its switches, what they show.
 */
export class DoorbellAccessory {
  private readonly sensor: MotionSensor;
  private readonly detections = new Map<Detection, MotionSensor>();
  private readonly button: DoorbellButton | undefined;
  /** The switches the settings add, by subtype. */
  private readonly switches = new Map<Control, ControlSwitch>();
  private readonly listeners: Array<(change: DoorbellChange) => void> = [];
  /** Faulted until the platform confirms the motion subscription. */
  private confirmed = false;
  /** The way notifications arrive (the push relay) has been down too long. */
  private deliveryDown = false;
  /** When the last ring that reached HomeKit arrived, and its relay time. */
  private lastPress: RingTimes = { at: -Infinity, relayTime: undefined };
  /** The first doorbell list read of the run is over: answered, failed, or not offered. */
  private listSettled = false;
  /**
   * Offline as the last run left it, and no read of this run has said so yet. It stands until the first
   * read is over, so an outage outlives a restart; a first read that tells nothing of it ends it,
   * since a list that fails faults nothing.
   */
  private offlineKept = false;
  /** What the last list read said of its connection; undefined until one said. */
  private online: boolean | undefined;
  /** Since when the service has said it cannot reach the doorbell (ms since the epoch); kept in the context. */
  private offlineSince: number | undefined;
  /** The Battery service, while the doorbell has a battery to show, and its level. */
  private battery: BatteryPart | undefined;
  private batteryLevel: number | undefined;
  private readonly batteryName: string;

  constructor(
    private readonly api: API,
    private readonly accessory: PlatformAccessory,
    settings: DoorbellSettings,
  ) {
    const { Service } = api.hap;
    const { deviceId } = settings;
    const name = cleanName(settings.name, deviceId);
    // The platform matches cached accessories to configured doorbells by this.
    accessory.context.deviceId = deviceId;
    describeAccessory(api, accessory, 'Doorbell', deviceId, name);

    const main = namedService(api, accessory, Service.MotionSensor, name, deviceId);
    main.setPrimaryService(true);
    this.sensor = this.motionSensor(main, settings, 'main');
    for (const detection of DETECTIONS) {
      if (settings.detections.includes(detection)) {
        const sensorName = cleanName(settings.name, deviceId, ` ${DETECTION_SUFFIXES[detection]}`);
        const service = namedService(api, accessory, Service.MotionSensor, sensorName, deviceId, detection);
        this.detections.set(detection, this.motionSensor(service, settings, detection));
      } else {
        removeService(accessory, Service.MotionSensor, detection);
      }
    }
    if (settings.button) {
      this.button = DoorbellButton.attach(api, accessory, name);
    } else {
      DoorbellButton.detach(api, accessory);
    }
    for (const control of CONTROL_SUBTYPES) {
      const { setting, needsButton } = CONTROLS[control];
      this.control(settings[setting] && (settings.button || !needsButton), control, settings);
    }
    this.batteryName = cleanName(settings.name, deviceId, ' Battery');
    this.restoreHealth();
    // Every service has each characteristic the plugin gives it by now; a Battery added later does the same.
    accessory.services.forEach(forgetOptionalTypes);
  }

  /** What the doorbell service last said of it, for the status. */
  get health(): DoorbellHealth {
    return { battery: this.batteryLevel ?? null, online: this.online ?? null, offlineSince: this.offlineSince };
  }

  /** What the doorbell list says of this doorbell: a key it leaves out changes nothing. */
  listEntry(entry: ListEntry): void {
    if (entry.battery !== undefined) {
      this.setBattery(entry.battery);
    }
    if (entry.online !== undefined) {
      this.setOnline(entry.online);
    }
  }

  /** A doorbell list read of this run is over, whatever it found (its entry, if any, came first). */
  listRead(): void {
    if (this.listSettled) {
      return;
    }
    this.listSettled = true;
    if (this.offlineKept) {
      this.offlineKept = false;
      this.offlineSince = undefined;
      this.online = undefined;
      delete this.accessory.context.offlineSince;
      this.notify({ type: 'online', online: undefined, wasOffline: true });
      this.showFault();
    }
  }

  /** The name HomeKit shows, for log lines such as "Motion at Front Door". */
  get name(): string {
    return this.accessory.displayName;
  }

  /** Whether motion alerts drive the motion sensors: the Motion Alerts switch, on when there is none. */
  get motionAlertsOn(): boolean {
    return this.allows('motion');
  }

  /** Whether a ring chimes: the Chime switch, on when there is none. */
  get chimeOn(): boolean {
    return this.allows('chime');
  }

  /**
   * When each switch off for a while turns itself on again (ms since the epoch), by the key
   * status.json gives it; undefined for a switch that is on, off until turned on, or not there.
   */
  get offUntil(): Record<OffUntilKey, number | undefined> {
    return Object.fromEntries(CONTROL_SUBTYPES.map((control) => [offUntilKey(control), this.switches.get(control)?.offUntil])) as Record<OffUntilKey, number | undefined>;
  }

  /** The switches whose time off ran out while Homebridge was down, so they were turned on at launch. */
  get onAgainAtLaunch(): Control[] {
    return [...this.switches].filter(([, attached]) => attached.onAgainAtLaunch).map(([control]) => control);
  }

  onChange(listener: (change: DoorbellChange) => void): void {
    this.listeners.push(listener);
  }

  /**
   * A motion alert: the main sensor turns on, and the detection's own sensor with it. False when
   * the Motion Alerts switch is off and the alert was ignored. `acceptedAt`: when the alert was
   * accepted, on `performance.now()`'s clock, for what follows the change.
   */
  motionDetected(detection?: Detection, acceptedAt = performance.now()): boolean {
    this.heardFrom();
    if (!this.motionAlertsOn) {
      return false;
    }
    this.sensor.detect(acceptedAt);
    if (detection !== undefined) {
      this.detections.get(detection)?.detect(acceptedAt);
    }
    return true;
  }

  /**
   * A press of the doorbell's button, unless the last press was less than MIN_RING_INTERVAL_MS before
   * (see tooSoon). `at`: when the ring was accepted, on `performance.now()`'s clock (a wall clock set
   * back would silence the doorbell). `relayTime`: the relay's `time` of the message that carried it,
   * in unix seconds, when it came through a relay. A ring never changes motion.
   */
  rang(at = performance.now(), relayTime?: number): RingOutcome {
    this.heardFrom();
    if (this.button === undefined) {
      return 'no-button';
    }
    const ring = { at, relayTime };
    // Measured from the last press that reached HomeKit: a steady flood still presses once in each interval.
    if (tooSoon(ring, this.lastPress)) {
      return 'too-soon';
    }
    this.lastPress = ring;
    const chime = this.chimeOn;
    this.button.ring(chime);
    const outcome = chime ? 'chimed' : 'silent';
    this.notify({ type: 'ring', outcome });
    return outcome;
  }

  /** Whether this doorbell's motion alerts are confirmed: subscribed, with a valid session. */
  setConfirmed(confirmed: boolean): void {
    this.confirmed = confirmed;
    this.showFault();
  }

  setDeliveryDown(down: boolean): void {
    this.deliveryDown = down;
    this.showFault();
  }

  dispose(): void {
    this.sensors().forEach((sensor) => sensor.dispose());
    this.switches.forEach((attached) => attached.dispose());
  }

  /** The battery level and the offline state the last run knew, so they show from launch. */
  private restoreHealth(): void {
    const { batteryLevel: level, offlineSince } = this.accessory.context as { batteryLevel?: unknown; offlineSince?: unknown };
    if (typeof level === 'number' && Number.isFinite(level)) {
      this.setBattery(level, false);
    } else {
      BatteryPart.detach(this.api, this.accessory);
    }
    if (typeof offlineSince === 'number' && Number.isFinite(offlineSince)) {
      this.online = false;
      this.offlineSince = offlineSince;
      this.offlineKept = true;
    }
  }

  /** `percent` as the service gave it; null removes the service (the doorbell is wired now). */
  private setBattery(percent: number | null, tell = true): void {
    const previous = this.batteryLevel;
    const level = percent === null ? undefined : batteryLevel(percent);
    if (level === previous && (level === undefined) === (this.battery === undefined)) {
      return;
    }
    this.batteryLevel = level;
    if (level === undefined) {
      BatteryPart.detach(this.api, this.accessory);
      this.battery = undefined;
      delete this.accessory.context.batteryLevel;
    } else {
      if (this.battery === undefined) {
        this.battery = BatteryPart.attach(this.api, this.accessory, this.batteryName, level);
      } else {
        this.battery.show(level);
      }
      this.accessory.context.batteryLevel = level;
    }
    if (tell) {
      this.notify({ type: 'battery', level, previous });
    }
  }

  private setOnline(online: boolean): void {
    // Said again by this run's read, or told otherwise: no longer only what the last run knew.
    this.offlineKept = false;
    if (this.online === online) {
      return;
    }
    const wasOffline = this.offlineSince !== undefined;
    this.online = online;
    this.offlineSince = online ? undefined : Date.now();
    if (online) {
      delete this.accessory.context.offlineSince;
    } else {
      this.accessory.context.offlineSince = this.offlineSince;
    }
    // Why first: the fault that follows may open the Doorbell Alerts sensor, which says why.
    this.notify({ type: 'online', online, wasOffline });
    if (wasOffline !== !online) {
      this.showFault();
    }
  }

  /** An alert from the doorbell proves it reaches the service, whatever a lagging list said. */
  private heardFrom(): void {
    if (this.offlineSince !== undefined) {
      this.setOnline(true);
    }
  }

  private motionSensor(service: Service, settings: DoorbellSettings, sensor: 'main' | Detection): MotionSensor {
    const notify = (detected: boolean, since: number) => this.notify({ type: 'motion', sensor, detected, since });
    return new MotionSensor(this.api, service, settings.motionTimeout, () => this.statusFault(), notify);
  }

  private control(wanted: boolean, control: Control, settings: DoorbellSettings): void {
    if (!wanted) {
      ControlSwitch.detach(this.api, this.accessory, control);
      return;
    }
    const minutes = settings[CONTROLS[control].minutesSetting];
    const attached = ControlSwitch.attach(this.api, this.accessory, control, { ...settings, minutes }, (on, how) => {
      if (!on) {
        this.silenceNow(CONTROLS[control].silences);
      }
      this.notify({ type: 'control', control, on, how, offUntil: attached.offUntil });
    });
    this.switches.set(control, attached);
  }

  /** Whether what a switch silences gets through: every switch that silences it is on (or there is none). */
  private allows(what: Silenced): boolean {
    return [...this.switches].every(([control, attached]) => CONTROLS[control].silences !== what || attached.isOn);
  }

  /** What a switch turned off changes at once, before the next motion or ring. */
  private silenceNow(what: Silenced): void {
    if (what === 'motion') {
      // Motion alerts off means no motion shown: the sensors turn off now, not at their timeout.
      this.sensors().forEach((sensor) => sensor.clear());
    }
  }

  private sensors(): MotionSensor[] {
    return [this.sensor, ...this.detections.values()];
  }

  private notify(change: DoorbellChange): void {
    this.listeners.forEach((listener) => listener(change));
  }

  private showFault(): void {
    this.sensors().forEach((sensor) => sensor.showFault());
    this.notify({ type: 'fault', faulted: this.statusFault() !== this.api.hap.Characteristic.StatusFault.NO_FAULT });
  }

  /** A fault until alerts are confirmed, and while they cannot arrive (the doorbell offline included). */
  private statusFault(): number {
    const { StatusFault } = this.api.hap.Characteristic;
    const flowing = this.confirmed && !this.deliveryDown && this.offlineSince === undefined;
    return flowing ? StatusFault.NO_FAULT : StatusFault.GENERAL_FAULT;
  }
}
