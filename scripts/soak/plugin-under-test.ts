/**
 * The platform as Homebridge runs it, in this process, with real HAP services (the tests' Homebridge
 * API) and the production timings, its log and its characteristics watched: each doorbell button's
 * ProgrammableSwitchEvent for the rings, each StatusFault and the Doorbell Alerts sensor for outages.
 */
import type { Characteristic } from 'homebridge';
import { alertsSensorUuid } from '../../src/accessories/alerts-sensor.js';
import { DoorbellMotionPlatform, PRODUCTION_TIMING } from '../../src/platform.js';
import { hap } from '../../test/support/hap.js';
import { createTestApi, type TestApi } from '../../test/support/homebridge-api.js';
import { accessoryOf, sensorValue } from '../../test/support/platform-harness.js';
import { AlertsSensorWatch } from './alerts-sensor.js';
import type { Cloud } from './cloud.js';
import { PluginLog, type LogLine } from './plugin-log.js';
import type { RingLedger } from './ring-ledger.js';

/** The plugin's line each time its relay stream opens. */
const STREAM_OPENED = /^push relay connected: /;
/** The plugin's debug line for a relay message it drops as too old. */
const STALE_DROP = /^Push relay: dropped a message\b.*\bold\b/;

export interface PluginLaunch {
  cloud: Cloud;
  doorbells: ReadonlyArray<{ deviceId: string; name: string }>;
  storagePath: string;
  ledger: RingLedger;
  /** True time, for the log's and the watches' records. */
  now: () => number;
}

export class PluginUnderTest {
  readonly sensor: AlertsSensorWatch;

  private constructor(
    readonly test: TestApi,
    readonly log: PluginLog,
    private readonly deviceIds: readonly string[],
    now: () => number,
  ) {
    this.sensor = new AlertsSensorWatch(now);
  }

  /** What Homebridge does at start-up: construct the platform, then signal the launch. */
  static launch({ cloud, doorbells, storagePath, ledger, now }: PluginLaunch): PluginUnderTest {
    const log = new PluginLog(now);
    const test = createTestApi({ storagePath });
    new DoorbellMotionPlatform(log.logger, cloud.platformConfig(), test.api, { ...PRODUCTION_TIMING, statusSink: cloud.disk.wrap });
    const plugin = new PluginUnderTest(
      test,
      log,
      doorbells.map(({ deviceId }) => deviceId),
      now,
    );
    log.listen((line) => plugin.onLogLine(line, ledger));
    test.launch();
    plugin.sensor.attach(
      plugin.deviceIds.map((deviceId) => plugin.characteristic(deviceId, hap.Service.MotionSensor, hap.Characteristic.StatusFault)),
      plugin.alertsSensorState(),
    );
    plugin.watchRings(ledger);
    return plugin;
  }

  /** Every doorbell shows no fault: its subscription is confirmed and the relay stream is not down. */
  allConfirmed(): boolean {
    return this.deviceIds.every((deviceId) => sensorValue(this.test, deviceId, 'StatusFault') === 0);
  }

  /** Homebridge's shutdown signal. */
  shutdown(): void {
    this.test.shutdown();
  }

  private onLogLine(line: LogLine, ledger: RingLedger): void {
    if (line.level === 'info' && STREAM_OPENED.test(line.message)) {
      ledger.streamOpened();
    } else if (line.level === 'debug' && STALE_DROP.test(line.message)) {
      ledger.droppedStale();
    }
    this.sensor.onLogLine(line);
  }

  /** A ring is the Doorbell service's ProgrammableSwitchEvent, an event HAP announces every time. */
  private watchRings(ledger: RingLedger): void {
    for (const deviceId of this.deviceIds) {
      this.characteristic(deviceId, hap.Service.Doorbell, hap.Characteristic.ProgrammableSwitchEvent).on('change', () => ledger.rang(deviceId));
    }
  }

  private characteristic(
    deviceId: string,
    service: typeof hap.Service.MotionSensor | typeof hap.Service.Doorbell,
    type: typeof hap.Characteristic.StatusFault | typeof hap.Characteristic.ProgrammableSwitchEvent,
  ): Characteristic {
    const found = accessoryOf({ test: this.test }, deviceId).getService(service)?.getCharacteristic(type);
    if (found === undefined) {
      throw new Error(`doorbell ${deviceId} has no ${service.name}`);
    }
    return found;
  }

  private alertsSensorState(): Characteristic {
    const found = this.test.registered.get(alertsSensorUuid(this.test.api))?.getService(hap.Service.ContactSensor)?.getCharacteristic(hap.Characteristic.ContactSensorState);
    if (found === undefined) {
      throw new Error('the platform published no Doorbell Alerts sensor');
    }
    return found;
  }
}
