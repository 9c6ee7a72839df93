import type { API, DynamicPlatformPlugin, Logging, MatterAccessory, PlatformAccessory, PlatformConfig } from 'homebridge';
import { DoorbellAccessories } from './accessories/doorbell-accessories.js';
import type { DoorbellAccessory } from './accessories/doorbell-accessory.js';
import { AlertsLink } from './alerts/alerts-link.js';
import { ALERTS_OPEN_AFTER_MS, type AlertsClock } from './alerts/alerts-rule.js';
import { CONFIGURATION_INVALID, NODE_TOO_OLD, NOT_CONFIGURED } from './alerts/reasons.js';
import type { RetryPolicy } from './cloud/retry-policy.js';
import { parseConfig, type PlatformSettings, type UsableAccount } from './config/parse-config.js';
import { pushAddressWarnings } from './config/push-settings.js';
import { Connection, type PushEndpoint, SharedEndpoint } from './connection/connection.js';
import type { ConnectionListener } from './connection/progress.js';
import { RequestSlots } from './connection/request-slots.js';
import { SCHEDULE_TIMING, type ScheduleTiming } from './connection/schedule.js';
import { SUBSCRIPTION_CONCURRENCY } from './connection/subscriptions.js';
import { errorMessage, SecretMaskingLogger } from './log.js';
import { MatterLink, type MatterLoader } from './matter-link.js';
import { NotificationHandler } from './notifications.js';
import type { MatterTiming } from './matter/registration-wait.js';
import { DirectEndpoint } from './push/direct/endpoint.js';
import type { IntakeDrop } from './push/intake.js';
import type { DoorbellNotification } from './push/notification.js';
import { RelayEndpoint } from './push/relay/endpoint.js';
import { RELAY_TIMING, type RelayTiming } from './push/relay/subscription.js';
import { openAccountFolder, openDataFolder, type PrivateFolder } from './storage/data-folder.js';
import { PushSecretStore } from './session/push-secrets.js';
import { RelayMarkStore } from './session/relay-mark.js';
import { moveTopLevelSession, SessionStore } from './session/session-store.js';
import { SessionWatcher } from './session/session-watcher.js';
import { PluginStatus, type PluginStatusOptions } from './status/plugin-status.js';
import type { StatusBoard } from './status/status-board.js';
import type { StatusTiming } from './status/delivery-status.js';
import { nodeVersionProblem } from './values/node-version.js';

/** How patiently the plugin retries and how often it refreshes; tests run the same code faster. */
export interface PlatformTiming {
  schedule: ScheduleTiming;
  relay: RelayTiming;
  /** How long the connection waits for the relay stream before trying again later. */
  relayConnectWaitMs: number;
  retry?: Partial<RetryPolicy>;
  /** Per cloud request; the clients' own default (10 s) when absent. */
  requestTimeoutMs?: number;
  /** This machine's clock (Date.now when absent): the tests set it wrong to show that relay alerts go by the relay's. */
  now?: () => number;
  /** How the Matter devices' registration is awaited; `matter/`'s own when absent. */
  matter?: MatterTiming;
  /** A clock that only moves forward (performance.now when absent), for durations such as the 5 s between two rings. */
  monotonicNow?: () => number;
  /** How often status.json is written; the status writer's own when absent. */
  status?: StatusTiming;
  /** Where status.json is written; the data folder when absent (a test makes writes fail through it). */
  statusSink?: PluginStatusOptions['sink'];
  /** How long something is down before the Doorbell Alerts sensor opens (a minute when absent), and on what clock. */
  alerts?: { openAfterMs: number; clock?: AlertsClock };
}

export const PRODUCTION_TIMING: PlatformTiming = { schedule: SCHEDULE_TIMING, relay: RELAY_TIMING, relayConnectWaitMs: 30_000, alerts: { openAfterMs: ALERTS_OPEN_AFTER_MS } };

/** Where notifications arrive, owned by the platform from launch to shutdown. */
type OwnedEndpoint = PushEndpoint & { close(): Promise<void> };

interface AcceptedConfig {
  settings: PlatformSettings;
  /** Every account served: the one at the top of the block, or each usable entry of `accounts`. */
  accounts: UsableAccount[];
  /** The block has `accounts`: each account keeps its files in its own folder, and its label names it. */
  several: boolean;
  /** False when some doorbell entries (or accounts) were left out for problems. */
  complete: boolean;
}

/** One account's background work: its connection and, for an account that signs in, the watcher of its session.json. */
interface AccountWork {
  connection: Connection;
  watcher: SessionWatcher | undefined;
}

/**
 * The Homebridge side: reads the config, publishes the accessories at launch without waiting on the
 * network, starts the push endpoint and the connection, and turns notifications into HomeKit state.
 */
export class DoorbellMotionPlatform implements DynamicPlatformPlugin {
  private readonly log: SecretMaskingLogger;
  private readonly accessories: DoorbellAccessories;
  /** The doorbells' Matter devices, on a bridge with Matter on. */
  private readonly matter: MatterLink | undefined;
  /** The Doorbell Alerts sensor: whether alerts reach this Homebridge. */
  private readonly alerts: AlertsLink;
  private endpoint: OwnedEndpoint | undefined;
  /** Each account's, in config order. */
  private readonly work: AccountWork[] = [];
  private stopping = false;
  /** status.json, for the settings page. */
  private status: PluginStatus | undefined;

  constructor(
    logging: Logging,
    config: PlatformConfig,
    private readonly api: API,
    private readonly timing: PlatformTiming,
    /** How the code of `matter/` is loaded, on a bridge with Matter on; tests watch whether it is. */
    loadMatter?: MatterLoader,
  ) {
    this.log = new SecretMaskingLogger(logging);
    this.accessories = new DoorbellAccessories(api, this.log);
    this.matter = MatterLink.forBridge(api, this.log, loadMatter, timing.matter);
    this.alerts = new AlertsLink({ api, log: this.log, matter: this.matter, onChange: () => this.status?.changed(), ...timing.alerts });
    // On an older Node.js every notification with a number in it would fail: better do nothing, and say so.
    const nodeProblem = nodeVersionProblem();
    if (nodeProblem !== undefined) {
      this.log.error(`This plugin ${nodeProblem}. Update Node.js and restart Homebridge; until then it does nothing and every doorbell shows a fault.`);
    }
    const accepted = nodeProblem === undefined ? this.readConfig(config) : NODE_TOO_OLD;
    // Whatever was started, a launch or only what shows a bad config as unavailable, ends here.
    api.on('shutdown', () => void this.shutdown());
    if (typeof accepted === 'string') {
      // Without a usable config or Node.js, what the cache shows (motion, no fault) would be stale: clear it.
      api.on('didFinishLaunching', () => {
        this.accessories.showUnavailable();
        this.matter?.showUnavailable();
        this.alerts.showUnavailable(accepted);
      });
      return;
    }
    api.on('didFinishLaunching', () => this.launch(accepted));
  }

  configureAccessory(accessory: PlatformAccessory): void {
    if (!this.alerts.restore(accessory)) {
      this.accessories.restore(accessory);
    }
  }

  /** Homebridge 2 hands over each cached Matter accessory, on a bridge with Matter on. */
  configureMatterAccessory(accessory: MatterAccessory): void {
    this.matter?.restore(accessory);
  }

  /** The settings, or why there are none usable: not configured, or the configuration is invalid. */
  private readConfig(config: PlatformConfig): AcceptedConfig | typeof NOT_CONFIGURED | typeof CONFIGURATION_INVALID {
    const result = parseConfig(config);
    for (const warning of result.warnings) {
      this.log.warn(`Configuration: ${warning}`);
    }
    if (result.status === 'unconfigured') {
      this.log.warn('Not configured yet: add your account and doorbells in the plugin settings. Doing nothing until then.');
      return NOT_CONFIGURED;
    }
    for (const problem of result.problems) {
      this.log.error(`Configuration: ${problem}`);
    }
    if (result.status === 'invalid') {
      this.log.error('Doing nothing until the configuration is fixed.');
      return CONFIGURATION_INVALID;
    }
    const accounts = result.accounts.filter((account): account is UsableAccount => account.fault === undefined);
    accounts.forEach((account) => this.log.addSecrets(account.account?.code, account.doorbellAccessToken));
    for (const note of result.notes) {
      this.log.info(`Configuration: ${note}`);
    }
    return { settings: result.settings, accounts, several: accounts.some(({ label }) => label !== undefined), complete: result.problems.length === 0 };
  }

  private launch({ settings: firstAccount, accounts, several, complete }: AcceptedConfig): void {
    // Every account's doorbells: a device id is in one account only (the config leaves out repeats).
    const settings = { ...firstAccount, doorbells: accounts.flatMap(({ doorbells }) => doorbells) };
    // A doorbell left out for a bad entry may own a cached accessory: keep them all until it is fixed,
    // but nothing updates those, so they must not go on showing what they were saved with.
    this.accessories.publish(settings.doorbells, { removeStale: complete });
    const batteries = new Map<string, number>();
    this.accessories.forEach((accessory, deviceId) => accessory.health.battery !== null && batteries.set(deviceId, accessory.health.battery));
    this.matter?.publish(settings.doorbells, { complete, alerts: settings.alertsSensor, batteries });
    const labelled = several ? accounts.map(({ label, doorbells }) => ({ label: label as string, deviceIds: doorbells.map(({ deviceId }) => deviceId) })) : undefined;
    this.alerts.launch({ ...settings, accounts: labelled }, complete);
    this.accessories.forEach((accessory, deviceId) => {
      this.matter?.follow(accessory, deviceId);
      // Kept offline from the last run: why it is down, before its fault is first counted.
      this.alerts.doorbellOffline(deviceId, accessory.health.online === false);
      accessory.onChange((change) => {
        if (change.type === 'fault') {
          this.alerts.faultChanged(deviceId, change.faulted);
        } else if (change.type === 'online') {
          this.alerts.doorbellOffline(deviceId, change.online === false);
        }
      });
    });
    if (!complete) {
      this.accessories.showUnavailable();
    }
    pushAddressWarnings(settings.push).forEach((warning) => this.log.warn(warning));
    const storagePath = this.api.user.storagePath();
    const folder = openDataFolder(storagePath, this.log);
    const { alerts } = this;
    // The alerts' outages of the last run are in the status file, read before it is written again.
    this.status = new PluginStatus({
      doorbells: settings.doorbells,
      pushMode: settings.push.mode,
      usesToken: settings.doorbellAccessToken !== undefined,
      accounts: several ? labelled?.map((entry, index) => ({ ...entry, usesToken: accounts[index].doorbellAccessToken !== undefined })) : undefined,
      folder,
      log: this.log,
      alerts,
      timing: this.timing.status,
      sink: this.timing.statusSink,
    });
    const { board } = this.status;
    this.accessories.forEach((accessory, deviceId) => {
      board.switchesChanged(deviceId, accessory.offUntil);
      accessory.onChange((change) => change.type === 'control' && board.switchesChanged(deviceId, accessory.offUntil));
      board.doorbellHealth(deviceId, accessory.health);
      accessory.onChange((change) => (change.type === 'battery' || change.type === 'online') && board.doorbellHealth(deviceId, accessory.health));
    });
    this.endpoint = this.createEndpoint(settings, new PushSecretStore(folder, this.log), this.status.board, new RelayMarkStore(folder, this.log));
    // One push endpoint for every account, suspended only once no account holds it; one set of request slots for all.
    const shared = { endpoint: new SharedEndpoint(this.endpoint), slots: new RequestSlots(SUBSCRIPTION_CONCURRENCY), registration: settings.push.registration };
    this.status.start();
    for (const account of accounts) {
      this.startAccount(account, several ? { folder: openAccountFolder(storagePath, account.key, this.log), root: folder } : { folder }, shared);
    }
  }

  /**
   * One account's connection and session watcher on its own folder, its log lines and the alerts'
   * reasons naming its label (with `accounts`). `root`, with `accounts`: the data folder, whose
   * top-level session moves into this account's folder first when it is this account's.
   */
  private startAccount(
    account: UsableAccount,
    { folder, root }: { folder: PrivateFolder; root?: PrivateFolder },
    shared: { endpoint: SharedEndpoint; slots: RequestSlots; registration: PlatformSettings['push']['registration'] },
  ): void {
    const log = this.log.labelled(account.label);
    const status = this.status as PluginStatus;
    const store = new SessionStore(folder, log);
    const own = new Set(account.doorbells.map(({ deviceId }) => deviceId));
    const ownAccessories = (action: (accessory: DoorbellAccessory) => void) => this.accessories.forEach((accessory, deviceId) => own.has(deviceId) && action(accessory));
    const listener: ConnectionListener = {
      subscribed: (deviceId) => this.accessories.get(deviceId)?.setConfirmed(true),
      subscriptionFailed: (deviceId) => this.accessories.get(deviceId)?.setConfirmed(false),
      sessionUnavailable: () => ownAccessories((accessory) => accessory.setConfirmed(false)),
      // A refresh that cannot register leaves none of its doorbells subscribed, until a retry gets through.
      connectFailed: (stage) => stage === 'registration' && ownAccessories((accessory) => accessory.setConfirmed(false)),
      // What the doorbell service says of each of its doorbells: its battery, whether it reaches it.
      doorbellListRead: (list) => this.accessories.listRead(list, root === undefined ? {} : { deviceIds: own, log }),
    };
    const connection = new Connection({
      settings: { credentials: account, doorbellServerUrl: account.doorbellServerUrl, doorbells: account.doorbells, registration: shared.registration, oneOfSeveral: root !== undefined },
      store,
      log,
      endpoint: shared.endpoint.share(),
      listener: this.alerts.following(status.following(listener, account.label), account.label),
      timing: this.timing.schedule,
      retry: this.timing.retry,
      timeoutMs: this.timing.requestTimeoutMs,
      slots: shared.slots,
    });
    // The settings page in the Homebridge UI signs in and out by writing session.json.
    const watcher = account.doorbellAccessToken === undefined ? new SessionWatcher(store, log, (session) => connection.followSessionFile(session)) : undefined;
    this.work.push({ connection, watcher });
    const start = () => {
      // Homebridge may shut down while the session is being moved: nothing starts after that.
      if (this.stopping) {
        return;
      }
      connection.start();
      watcher?.start().catch((error: unknown) => log.warn(`Cannot follow sign-ins from the settings page: ${errorMessage(error)}`));
    };
    if (root === undefined) {
      start();
      return;
    }
    // A config that gained `accounts` keeps the session it had at the top: no new sign-in.
    void moveTopLevelSession(root, folder, account, log)
      .catch((error: unknown) => log.warn(`Could not move the session into ${folder.path} (${errorMessage(error)}): it is tried again at the next start, and until then this account is not signed in.`))
      .finally(start);
  }

  private createEndpoint({ push }: PlatformSettings, pushSecrets: PushSecretStore, status: StatusBoard, relayMarks: RelayMarkStore): OwnedEndpoint {
    const secrets = () => pushSecrets.secrets();
    const notifications = new NotificationHandler(this.accessories, status, this.log, this.timing.monotonicNow);
    const onNotification = (notification: DoorbellNotification) => notifications.handle(notification);
    const onDropped = (cause: IntakeDrop | 'stale', ageMs?: number) => {
      status.dropped(cause);
      this.alerts.dropped(cause, ageMs);
    };
    if (push.mode === 'direct') {
      return new DirectEndpoint(push.direct, secrets, this.log, onNotification, () => status.receiverListens(), onDropped);
    }
    return new RelayEndpoint({
      settings: push.relay,
      secrets,
      relayMarks,
      log: this.log,
      onNotification,
      onDropped,
      onDeliveryDown: (down, outage) => {
        // Why first: the faults that follow may open the Doorbell Alerts sensor, which says why.
        this.alerts.deliveryDown(outage);
        this.accessories.forEach((accessory) => accessory.setDeliveryDown(down));
        status.deliveryDownChanged(down);
      },
      onConnected: () => {
        this.alerts.relayConnected();
        this.work.forEach(({ connection }) => connection.endpointUp());
        status.relayConnected();
      },
      timing: this.timing.relay,
      connectWaitMs: this.timing.relayConnectWaitMs,
      now: this.timing.now,
    });
  }

  private async shutdown(): Promise<void> {
    this.accessories.dispose();
    this.alerts.dispose();
    this.matter?.dispose();
    this.stopping = true;
    this.work.forEach(({ connection }) => connection.stop());
    await Promise.all([this.endpoint?.close(), ...this.work.map(({ watcher }) => watcher?.stop()), this.status?.stop()]);
  }
}
