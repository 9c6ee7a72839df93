/**
 * The platform as Homebridge runs it, in this process, with real HAP services (the tests' Homebridge
 * API) and the production timings, its log and its characteristics watched: each doorbell button's
 * ProgrammableSwitchEvent for the rings, each StatusFault and the Doorbell Alerts sensor for outages.
 * Homebridge may restart it (its shutdown, then a launch from the accessory cache) or be killed under
 * it (no shutdown: its timers and sockets dropped, see PluginProcess), then launch it again.
 */
import type { API, Characteristic, PlatformAccessory } from 'homebridge';
import { alertsSensorUuid } from '../../src/alerts/alerts-sensor.js';
import { DoorbellMotionPlatform, PRODUCTION_TIMING } from '../../src/platform.js';
import { hap } from '../lib/hap.js';
import { createTestApi, type TestApi } from '../lib/homebridge-api.js';
import { accessoryOf, sensorValue } from '../lib/platform-harness.js';
import { AlertsSensorWatch } from './alerts-sensor.js';
import type { Cloud } from './cloud.js';
import { PluginLog, type LogLine } from './plugin-log.js';
import { PluginProcess } from './plugin-process.js';
import type { RingLedger } from './ring-ledger.js';
import type { SimulatedTime } from './simulated-time.js';

/** The plugin's line each time its relay stream opens. */
const STREAM_OPENED = /^push relay connected: /;
/** The plugin's debug line for a relay message it drops as too old. */
const STALE_DROP = /^Push relay: dropped a message\b.*\bold\b/;

export interface PluginLaunch {
  cloud: Cloud;
  doorbells: ReadonlyArray<{ deviceId: string; name: string }>;
  storagePath: string;
  ledger: RingLedger;
  time: SimulatedTime;
  /** Told each time the platform launches, the first time too, before its stream can open. */
  onLaunch?: () => void;
  /** Told of every line the platform logs. */
  onLogLine?: (line: LogLine) => void;
  /** Told of every press of a doorbell's button. */
  onRing?: (deviceId: string) => void;
  /** Told of every change of a doorbell's StatusFault (1 in fault, 0 not). */
  onFault?: (deviceId: string, fault: unknown) => void;
}

/** An accessory as Homebridge's cache file holds it. */
type CachedAccessory = Parameters<API['platformAccessory']['deserialize']>[0];

/** One run of the platform: its process, its Homebridge API, and how to stop watching it. */
interface Run {
  process: PluginProcess;
  test: TestApi;
  unwatch: Array<() => void>;
}

export class PluginUnderTest {
  readonly sensor: AlertsSensorWatch;
  readonly log: PluginLog;
  /** Launches after the first: restarts and kills alike. */
  relaunches = 0;
  private run: Run;
  /** Homebridge's accessory cache as last written (after the first launch registered them, at each shutdown): a launch reads it. */
  private cache: string[];
  /** Set while Homebridge is down. */
  private stopped: { abrupt: boolean } | undefined;

  private constructor(private readonly options: PluginLaunch) {
    this.sensor = new AlertsSensorWatch(() => options.time.now);
    this.log = new PluginLog(() => options.time.now);
    this.log.listen((line) => this.onLogLine(line));
    this.run = this.start([]);
    this.cache = this.saveCache();
  }

  /** What Homebridge does at start-up: construct the platform, then signal the launch. */
  static launch(options: PluginLaunch): PluginUnderTest {
    return new PluginUnderTest(options);
  }

  /** Homebridge is not running: stopped or killed, and not launched again yet. */
  get down(): boolean {
    return this.stopped !== undefined;
  }

  /** Every doorbell shows no fault: its subscription is confirmed and the relay stream is not down. */
  allConfirmed(): boolean {
    return !this.down && this.deviceIds.every((deviceId) => sensorValue(this.run.test, deviceId, 'StatusFault') === 0);
  }

  /** Homebridge stops: its shutdown signal, then its accessory cache written, as Homebridge does on its way out. */
  stop(): void {
    this.stopped = { abrupt: false };
    this.unwatch();
    this.run.process.run(() => this.run.test.shutdown());
    this.cache = this.saveCache();
  }

  /** Homebridge's process is killed: no shutdown signal, no cache written; its timers and sockets go with it. */
  kill(): void {
    this.stopped = { abrupt: true };
    this.unwatch();
    this.run.process.kill();
  }

  /**
   * Homebridge starts again, from its accessory cache. Returns how many timers and sockets the last
   * run still held after its shutdown (0 after a clean one), which the end of its process then drops.
   */
  relaunch(): number {
    const left = this.stopped?.abrupt === false ? this.run.process.held() : 0;
    this.run.process.kill();
    this.stopped = undefined;
    this.relaunches += 1;
    const { platformAccessory } = this.run.test.api;
    this.run = this.start(this.cache.map((json) => platformAccessory.deserialize(JSON.parse(json) as CachedAccessory)));
    return left;
  }

  /** Homebridge's shutdown signal, at the end of the week. */
  shutdown(): void {
    if (!this.down) {
      this.stop();
    }
  }

  private start(cached: PlatformAccessory[]): Run {
    const { cloud, storagePath, ledger, onLaunch, time } = this.options;
    const process = new PluginProcess(time);
    const test = createTestApi({ storagePath, cachedAccessories: cached });
    // A killed process writes no more lines; one shutting down still does.
    const logger = this.log.loggerWhile(() => process.alive);
    onLaunch?.();
    process.run(() => {
      const platform = new DoorbellMotionPlatform(logger, cloud.platformConfig(), test.api, { ...PRODUCTION_TIMING, statusSink: cloud.disk.wrap });
      cached.forEach((accessory) => platform.configureAccessory(accessory));
      test.launch();
    });
    const run: Run = { process, test, unwatch: [() => this.sensor.detach()] };
    this.sensor.attach(
      this.deviceIds.map((deviceId) => this.characteristic(run, deviceId, hap.Service.MotionSensor, hap.Characteristic.StatusFault)),
      this.alertsSensorState(run),
    );
    this.watchRings(run, ledger);
    this.watchFaults(run);
    return run;
  }

  private get deviceIds(): string[] {
    return this.options.doorbells.map(({ deviceId }) => deviceId);
  }

  /** Homebridge's accessory cache, as it writes it: each accessory serialized to JSON. */
  private saveCache(): string[] {
    const { platformAccessory } = this.run.test.api;
    return [...this.run.test.registered.values()].map((accessory) => JSON.stringify(platformAccessory.serialize(accessory)));
  }

  private unwatch(): void {
    this.run.unwatch.forEach((unwatch) => unwatch());
    this.run.unwatch = [];
  }

  private onLogLine(line: LogLine): void {
    const { ledger } = this.options;
    if (line.level === 'info' && STREAM_OPENED.test(line.message)) {
      ledger.streamOpened();
    } else if (line.level === 'debug' && STALE_DROP.test(line.message)) {
      ledger.droppedStale();
    }
    this.sensor.onLogLine(line);
    this.options.onLogLine?.(line);
  }

  /** A ring is the Doorbell service's ProgrammableSwitchEvent, an event HAP announces every time. */
  private watchRings(run: Run, ledger: RingLedger): void {
    for (const deviceId of this.deviceIds) {
      const button = this.characteristic(run, deviceId, hap.Service.Doorbell, hap.Characteristic.ProgrammableSwitchEvent);
      const rang = (): void => {
        ledger.rang(deviceId);
        this.options.onRing?.(deviceId);
      };
      button.on('change', rang);
      run.unwatch.push(() => button.off('change', rang));
    }
  }

  /** Each doorbell's StatusFault, as HAP announces its changes. */
  private watchFaults(run: Run): void {
    const { onFault } = this.options;
    if (onFault === undefined) {
      return;
    }
    for (const deviceId of this.deviceIds) {
      const fault = this.characteristic(run, deviceId, hap.Service.MotionSensor, hap.Characteristic.StatusFault);
      const changed = ({ newValue }: { newValue: unknown }): void => onFault(deviceId, newValue);
      fault.on('change', changed);
      run.unwatch.push(() => fault.off('change', changed));
    }
  }

  private characteristic(
    run: Run,
    deviceId: string,
    service: typeof hap.Service.MotionSensor | typeof hap.Service.Doorbell,
    type: typeof hap.Characteristic.StatusFault | typeof hap.Characteristic.ProgrammableSwitchEvent,
  ): Characteristic {
    const found = accessoryOf({ test: run.test }, deviceId).getService(service)?.getCharacteristic(type);
    if (found === undefined) {
      throw new Error(`doorbell ${deviceId} has no ${service.name}`);
    }
    return found;
  }

  private alertsSensorState(run: Run): Characteristic {
    const found = run.test.registered.get(alertsSensorUuid(run.test.api))?.getService(hap.Service.ContactSensor)?.getCharacteristic(hap.Characteristic.ContactSensorState);
    if (found === undefined) {
      throw new Error('the platform published no Doorbell Alerts sensor');
    }
    return found;
  }
}
