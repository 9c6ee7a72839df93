import type { API, DynamicPlatformPlugin, Logging, PlatformAccessory, PlatformConfig, PlatformPluginConstructor } from 'homebridge';
import { DoorbellAccessories } from './accessories/doorbell-accessories.js';
import type { RetryPolicy } from './cloud/retry-policy.js';
import { parseConfig, type PlatformSettings } from './config/parse-config.js';
import { Connection } from './connection/connection.js';
import { SCHEDULE_TIMING, type ScheduleTiming } from './connection/schedule.js';
import { SecretMaskingLogger } from './log.js';
import { DirectEndpoint } from './push/direct-endpoint.js';
import type { DoorbellNotification } from './push/notification.js';
import { openDataFolder } from './session/data-folder.js';
import { PushSecretStore } from './session/push-secrets.js';
import { SessionStore } from './session/session-store.js';

/** How patiently the plugin retries and how often it refreshes; tests run the same code faster. */
export interface PlatformTiming {
  schedule: ScheduleTiming;
  retry?: Partial<RetryPolicy>;
}

export const PRODUCTION_TIMING: PlatformTiming = { schedule: SCHEDULE_TIMING };

interface AcceptedConfig {
  settings: PlatformSettings;
  /** False when some doorbell entries were left out for problems. */
  complete: boolean;
}

/**
 * The Homebridge side: reads the config, publishes the accessories at launch without waiting on the
 * network, starts the push endpoint and the connection, and turns notifications into HomeKit state.
 */
export class DoorbellMotionPlatform implements DynamicPlatformPlugin {
  private readonly log: SecretMaskingLogger;
  private readonly accessories: DoorbellAccessories;
  private endpoint: DirectEndpoint | undefined;
  private connection: Connection | undefined;

  constructor(
    logging: Logging,
    config: PlatformConfig,
    private readonly api: API,
    private readonly timing: PlatformTiming,
  ) {
    this.log = new SecretMaskingLogger(logging);
    this.accessories = new DoorbellAccessories(api, this.log);
    const accepted = this.readConfig(config);
    if (accepted === undefined) {
      return;
    }
    api.on('didFinishLaunching', () => this.launch(accepted));
    api.on('shutdown', () => void this.shutdown());
  }

  configureAccessory(accessory: PlatformAccessory): void {
    this.accessories.restore(accessory);
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
    this.accessories.publish(settings.doorbells, { removeStale: complete });
    const folder = openDataFolder(this.api.user.storagePath(), this.log);
    const pushSecrets = new PushSecretStore(folder, this.log);
    this.endpoint = new DirectEndpoint(settings.push, () => pushSecrets.secrets(), this.log, (notification) =>
      this.onNotification(notification),
    );
    this.connection = new Connection({
      settings: {
        credentials: settings,
        doorbellServerUrl: settings.doorbellServerUrl,
        doorbells: settings.doorbells,
        registration: settings.push,
      },
      store: new SessionStore(folder, this.log),
      log: this.log,
      endpoint: this.endpoint,
      listener: {
        subscribed: (deviceId) => this.accessories.get(deviceId)?.setFault(false),
        subscriptionFailed: (deviceId) => this.accessories.get(deviceId)?.setFault(true),
        sessionUnavailable: () => this.accessories.setFaultEverywhere(true),
      },
      timing: this.timing.schedule,
      retry: this.timing.retry,
    });
    this.connection.start();
  }

  private async shutdown(): Promise<void> {
    this.accessories.dispose();
    this.connection?.stop();
    await this.endpoint?.close();
  }

  private onNotification(notification: DoorbellNotification): void {
    const accessory = this.accessories.get(notification.deviceId);
    if (accessory === undefined) {
      this.log.debug(`Ignored a ${notification.kind} notification for doorbell ${notification.deviceId}: not configured`);
      return;
    }
    if (notification.kind !== 'motion') {
      this.log.debug(`Ignored a ${notification.kind} notification at ${accessory.name}`);
      return;
    }
    accessory.motionDetected();
    this.log.info(`Motion at ${accessory.name}`);
  }
}

/** The constructor Homebridge calls (with log, config and api), bound to the timings given here. */
export function platformWithTiming(timing: PlatformTiming): PlatformPluginConstructor {
  return class extends DoorbellMotionPlatform {
    constructor(logging: Logging, config: PlatformConfig, api: API) {
      super(logging, config, api, timing);
    }
  };
}
