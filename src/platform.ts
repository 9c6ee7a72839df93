import type { API, DynamicPlatformPlugin, Logging, PlatformAccessory, PlatformConfig } from 'homebridge';
import type { PlatformSettings } from './config.js';
import { parseConfig } from './config.js';
import type { LinkTiming } from './doorbell-link.js';
import { DoorbellLink } from './doorbell-link.js';
import type { RetryPolicy } from './cloud/http.js';
import { SecretMaskingLogger } from './log.js';
import { accessoryUuid, MotionSensorAccessory } from './motion-accessory.js';
import type { DoorbellNotification } from './notification.js';
import { SessionStore } from './session-store.js';
import { PLATFORM_NAME, PLUGIN_NAME } from './settings.js';

interface AcceptedConfig {
  settings: PlatformSettings;
  /** False when some doorbell entries were left out for problems. */
  complete: boolean;
}

/** Test hooks: shorter timings and retries. Homebridge passes none of these. */
export interface PlatformTuning {
  timing?: LinkTiming;
  retry?: Partial<RetryPolicy>;
}

/**
 * Owns the accessories: restores, registers and removes them at launch without waiting on the
 * network, then hands the cloud side to a DoorbellLink and turns its events into HomeKit state.
 */
export class DoorbellMotionPlatform implements DynamicPlatformPlugin {
  private readonly log: SecretMaskingLogger;
  private readonly cached = new Map<string, PlatformAccessory>();
  private readonly sensors = new Map<string, MotionSensorAccessory>();
  private link: DoorbellLink | undefined;

  constructor(
    logging: Logging,
    config: PlatformConfig,
    private readonly api: API,
    private readonly tuning: PlatformTuning = {},
  ) {
    this.log = new SecretMaskingLogger(logging);
    const accepted = this.readConfig(config);
    if (accepted === undefined) {
      return;
    }
    api.on('didFinishLaunching', () => this.launch(accepted));
    api.on('shutdown', () => this.shutdown());
  }

  /** Homebridge hands over each cached accessory before didFinishLaunching. */
  configureAccessory(accessory: PlatformAccessory): void {
    this.cached.set(accessory.UUID, accessory);
  }

  private readConfig(config: PlatformConfig): AcceptedConfig | undefined {
    const result = parseConfig(config);
    if (result.status === 'unconfigured') {
      this.log.warn('Not configured yet: add your account and doorbells in the plugin settings. Doing nothing until then.');
      return undefined;
    }
    for (const problem of result.problems) {
      this.log.error(`Configuration: ${problem}`);
    }
    if (result.status === 'invalid') {
      this.log.error('Doing nothing until the configuration is fixed.');
      return undefined;
    }
    this.log.addSecrets(result.settings.account?.code, result.settings.doorbellAccessToken);
    return { settings: result.settings, complete: result.problems.length === 0 };
  }

  private launch({ settings, complete }: AcceptedConfig): void {
    // A doorbell left out for a bad entry may own a cached accessory: keep them all until it is fixed.
    this.reconcileAccessories(settings, { removeStale: complete });
    this.link = new DoorbellLink({
      settings,
      store: new SessionStore(this.api.user.storagePath(), this.log),
      log: this.log,
      listener: {
        subscribed: (deviceId) => this.sensors.get(deviceId)?.setFault(false),
        subscriptionFailed: (deviceId) => this.sensors.get(deviceId)?.setFault(true),
        sessionUnavailable: () => this.sensors.forEach((sensor) => sensor.setFault(true)),
        notification: (notification) => this.onNotification(notification),
      },
      timing: this.tuning.timing,
      retry: this.tuning.retry,
    });
    this.link.start();
  }

  private shutdown(): void {
    this.sensors.forEach((sensor) => sensor.dispose());
    void this.link?.stop();
  }

  private reconcileAccessories(settings: PlatformSettings, { removeStale }: { removeStale: boolean }): void {
    const fresh: PlatformAccessory[] = [];
    const renamed: PlatformAccessory[] = [];
    for (const doorbell of settings.doorbells) {
      const uuid = accessoryUuid(this.api, doorbell.deviceId);
      let accessory = this.cached.get(uuid);
      if (accessory === undefined) {
        accessory = new this.api.platformAccessory(doorbell.name, uuid);
        fresh.push(accessory);
      } else if (accessory.displayName !== doorbell.name) {
        renamed.push(accessory);
      }
      this.cached.delete(uuid);
      this.sensors.set(doorbell.deviceId, new MotionSensorAccessory(this.api, accessory, doorbell));
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
    this.log.info(`Publishing ${settings.doorbells.length} doorbell motion sensor${settings.doorbells.length === 1 ? '' : 's'}`);
  }

  private onNotification(notification: DoorbellNotification): void {
    const sensor = this.sensors.get(notification.deviceId);
    if (sensor === undefined) {
      this.log.debug(`Ignored a ${notification.kind} notification for doorbell ${notification.deviceId}: not configured`);
      return;
    }
    if (notification.kind !== 'motion') {
      this.log.debug(`Ignored a ${notification.kind} notification at ${sensor.name}`);
      return;
    }
    sensor.motionDetected();
    this.log.info(`Motion at ${sensor.name}`);
  }
}
