import type { API, PlatformAccessory } from 'homebridge';
import type { ConnectionListener } from '../connection/progress.js';
import type { Logger } from '../log.js';
import type { MatterLink } from '../matter-link.js';
import type { IntakeDrop } from '../push/intake.js';
import type { DeliveryOutage } from '../push/relay/subscription.js';
import { PLATFORM_NAME, PLUGIN_NAME } from '../settings.js';
import type { AlertsRecord } from '../status/delivery-status.js';
import { type AlertsClock, AlertsRule, SYSTEM_CLOCK } from './alerts-rule.js';
import { ALERTS_SENSOR_NAME, AlertsSensor, alertsSensorUuid } from './alerts-sensor.js';
import { CONFIGURATION_INVALID, DownReasons, type ReasonSettings } from './reasons.js';

/** HAP bridges at most this many accessories: 149 doorbells leave no room for the sensor. */
const BRIDGE_ACCESSORY_LIMIT = 149;

export interface AlertsLinkOptions {
  api: API;
  log: Logger;
  /** The Matter devices, on a bridge with Matter on: the sensor is a Matter contact sensor too. */
  matter: MatterLink | undefined;
  /** What status.json holds of the alerts changed. */
  onChange: () => void;
  /** Down this long, alerts count as stopped; the rule's own minute when absent. */
  openAfterMs?: number;
  clock?: AlertsClock;
}

/**
 * The platform's way to the Doorbell Alerts sensor: the rule (`alerts/`) decides from the doorbells'
 * faults whether alerts flow, the reasons come from what the connection and the relay tell, and the
 * HomeKit accessory and its Matter twin show the decision. It only ever hears of a fault change: the
 * way from a push to HomeKit does no work for it.
 */
export class AlertsLink {
  private cached: PlatformAccessory | undefined;
  private sensor: AlertsSensor | undefined;
  private rule: AlertsRule | undefined;
  private reasons = new DownReasons({ doorbells: [], push: { mode: 'relay', direct: { host: '', port: 0 } } });
  private readonly clock: AlertsClock;
  /** The date of the relay's fault while it lasts, on the rule's monotonic clock. */
  private relayFaultAt: number | undefined;

  constructor(private readonly options: AlertsLinkOptions) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** Takes the cached Doorbell Alerts accessory; false for any other. */
  restore(accessory: PlatformAccessory): boolean {
    if (accessory.UUID !== alertsSensorUuid(this.options.api)) {
      return false;
    }
    this.cached = accessory;
    return true;
  }

  /**
   * A usable config: every doorbell is down until first confirmed, and the whole plugin while some
   * doorbell entries are left out. `alertsSensor` off removes the accessory; the rule runs anyway,
   * for the log and status.json.
   */
  launch(settings: ReasonSettings & { alertsSensor: boolean }, complete: boolean): void {
    const { api, log } = this.options;
    this.reasons = new DownReasons(settings);
    if (settings.alertsSensor && settings.doorbells.length >= BRIDGE_ACCESSORY_LIMIT) {
      log.warn(`${ALERTS_SENSOR_NAME} is not in HomeKit: a bridge holds ${BRIDGE_ACCESSORY_LIMIT} accessories, all of them doorbells. Give some doorbells a child bridge of their own.`);
    } else if (settings.alertsSensor) {
      const accessory = this.cached ?? new api.platformAccessory(ALERTS_SENSOR_NAME, alertsSensorUuid(api));
      this.sensor = new AlertsSensor(api, accessory);
      if (this.cached === undefined) {
        api.registerPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, [accessory]);
      }
    } else if (this.cached !== undefined) {
      api.unregisterPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, [this.cached]);
      log.info(`Removed ${ALERTS_SENSOR_NAME}: alertsSensor is off`);
    }
    const doorbells = settings.doorbells.map(({ deviceId }) => deviceId);
    this.start(complete ? doorbells : [...doorbells, CONFIGURATION_INVALID]);
  }

  /**
   * No usable config (or a Node.js the plugin cannot run on): the whole plugin is down for `reason`
   * (CONFIGURATION_INVALID, NOT_CONFIGURED, NODE_TOO_OLD). A cached sensor is kept and shows it; none is
   * added, and nothing was written for it to read.
   */
  showUnavailable(reason: string): void {
    if (this.cached !== undefined) {
      this.sensor = new AlertsSensor(this.options.api, this.cached);
    }
    this.start([reason]);
    this.rule?.restore(undefined);
  }

  /** What the last run wrote in status.json; the rule decides from now on. */
  restoreRecord(previous: Partial<AlertsRecord> | undefined): void {
    this.rule?.restore(previous);
  }

  record(): AlertsRecord | undefined {
    return this.rule?.record();
  }

  /**
   * A doorbell's StatusFault in HomeKit changed: it is down while faulted. While the relay's fault
   * lasts, every doorbell shows it, so a fault that appears then is the relay's, and counts from its
   * date.
   */
  faultChanged(deviceId: string, faulted: boolean): void {
    this.rule?.setDown(deviceId, faulted, this.relayFaultAt);
  }

  /**
   * The relay stream has been down too long (why, and since when), or is back (undefined). Told
   * before the doorbells' faults change.
   */
  deliveryDown(outage: DeliveryOutage | undefined): void {
    this.reasons.deliveryDown(outage);
    // A stream found silent only after the alive timeout went down long before: its fault is dated
    // then, so the sensor opens just when a ring sent since would come back too old to show.
    this.relayFaultAt = outage === undefined ? undefined : this.clock.monotonic() - outage.faultedForMs;
    if (outage === undefined) {
      this.rule?.relayBack();
    }
  }

  /** The doorbell service says it cannot reach the doorbell, or no longer says so: why it is down. */
  doorbellOffline(deviceId: string, offline: boolean): void {
    this.reasons.doorbellOffline(deviceId, offline);
  }

  /** A relay stream opened: what it drops as stale from now on is one catch-up. */
  relayConnected(): void {
    this.rule?.catchUpBegins();
  }

  /** A notification was dropped; a stale one, `ageMs` after it was sent, came too late to show, and is never silent. */
  dropped(cause: IntakeDrop | 'stale', ageMs = 0): void {
    if (cause === 'stale') {
      this.rule?.late(ageMs);
    }
  }

  /** `listener`, with why doorbells are down noted as well; `account`: the connection's account label, with `accounts`. */
  following(listener: ConnectionListener, account?: string): ConnectionListener {
    const reasons = this.reasons;
    return {
      ...listener,
      subscribed: (deviceId) => {
        reasons.subscribed(deviceId);
        listener.subscribed(deviceId);
      },
      subscriptionFailed: (deviceId, error) => {
        reasons.subscriptionFailed(deviceId, error);
        listener.subscriptionFailed(deviceId, error);
      },
      sessionUnavailable: (why) => {
        reasons.sessionUnavailable(why, account);
        listener.sessionUnavailable(why);
      },
      connectFailed: (stage, error) => {
        reasons.connectFailed(stage, error, account);
        listener.connectFailed?.(stage, error);
      },
    };
  }

  dispose(): void {
    this.rule?.dispose();
  }

  private start(down: readonly string[]): void {
    const { log, matter, onChange, openAfterMs } = this.options;
    matter?.showAlerts(this.sensor?.isOpen ?? false);
    this.rule = new AlertsRule({
      down,
      describe: (keys, since, now) => this.reasons.describe(keys, since, now),
      log,
      onShow: (open) => {
        this.sensor?.show(open);
        matter?.showAlerts(open);
      },
      onChange,
      openAfterMs,
      clock: this.clock,
    });
  }
}
