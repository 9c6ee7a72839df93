import { CloudError } from '../cloud/errors.js';
import type { ConnectStage, SessionLoss } from '../connection/progress.js';
import { HOW_TO_SIGN_IN } from '../session/advice.js';
import { NODE_TOO_OLD_REASON, NODE_TOO_OLD_TODO } from '../values/node-version.js';
import { clockTime } from '../values/time.js';

/** Why alerts stopped, in plain words that never hold a secret, and what the user can do about it. */
export interface Reason {
  words: string;
  todo: string;
}

/** Why the whole plugin cannot deliver alerts, with no doorbell of its own to blame. */
export const CONFIGURATION_INVALID = 'the configuration is invalid';
export const NOT_CONFIGURED = 'the plugin is not configured yet';
export const NODE_TOO_OLD = NODE_TOO_OLD_REASON;

const SETTINGS_PAGE = "the plugin's settings page in the Homebridge UI";
const SIGN_IN_AGAIN = `Sign in again: ${HOW_TO_SIGN_IN}.`;
const KEEPS_TRYING = 'The plugin keeps trying';

const PLATFORM_REASONS: Readonly<Record<string, string>> = {
  [CONFIGURATION_INVALID]: `Fix the settings the log names, on ${SETTINGS_PAGE}, and restart Homebridge.`,
  [NOT_CONFIGURED]: `Sign in and add your doorbells on ${SETTINGS_PAGE}, then restart Homebridge.`,
  [NODE_TOO_OLD]: NODE_TOO_OLD_TODO,
};

/** Why an account's session is lost; `label` names the account, with `accounts`. */
function sessionReason(why: SessionLoss, label: string | undefined): Reason {
  switch (why) {
    case 'expired':
      return { words: label === undefined ? 'the session expired' : `the session of ${label} expired`, todo: SIGN_IN_AGAIN };
    case 'signed-out':
      return { words: label === undefined ? 'signed out' : `${label} is signed out`, todo: SIGN_IN_AGAIN };
    case 'token-refused':
      return {
        words: label === undefined ? 'the doorbell access token was refused' : `the doorbell access token of ${label} was refused`,
        todo: `Replace doorbellAccessToken on ${SETTINGS_PAGE}, then restart Homebridge.`,
      };
  }
}

export interface ReasonSettings {
  doorbells: ReadonlyArray<{ deviceId: string; name: string }>;
  /** Where notifications arrive: the receiver's address names what cannot listen. */
  push: { mode: 'relay' | 'direct'; direct: { host: string; port: number } };
  /** With `accounts` in the config: each account's label and doorbells, so a reason names the account. */
  accounts?: ReadonlyArray<{ label: string; deviceIds: readonly string[] }>;
}

/** What is known of one account's connection: its session lost, or its last attempt stopped. */
interface AccountReasons {
  session?: SessionLoss;
  stopped?: { stage: ConnectStage; error: unknown };
}

/**
 * Why doorbells are down, kept from what the connection and the push endpoint tell the platform:
 * a session lost, the relay stream down, a subscription failed, an attempt to connect stopped. Asked
 * only when the sensor opens, so keeping it up to date costs a field or two.
 */
export class DownReasons {
  /** Each account's, by label; the one account of a config without `accounts` under undefined. */
  private readonly accounts = new Map<string | undefined, AccountReasons>();
  /** The account each doorbell belongs to, with `accounts`. */
  private readonly accountOf = new Map<string, string>();
  private relay: { since: number; refused: boolean } | undefined;
  /** Why each doorbell's subscription failed, until one succeeds. */
  private readonly failures = new Map<string, string>();
  /** The doorbells the doorbell service says it cannot reach. */
  private readonly offline = new Set<string>();

  constructor(private readonly settings: ReasonSettings) {
    for (const { label, deviceIds } of settings.accounts ?? []) {
      deviceIds.forEach((deviceId) => this.accountOf.set(deviceId, label));
    }
  }

  subscribed(deviceId: string): void {
    this.failures.delete(deviceId);
    this.accounts.delete(this.accountOf.get(deviceId));
  }

  subscriptionFailed(deviceId: string, error: unknown): void {
    this.failures.set(deviceId, causeOf(error, 'doorbell service', 'the doorbell service does not know this device id'));
    this.reasonsOf(this.accountOf.get(deviceId)).stopped = undefined;
  }

  /** The doorbell service says it cannot reach the doorbell (true), or no longer says so. */
  doorbellOffline(deviceId: string, offline: boolean): void {
    if (offline) {
      this.offline.add(deviceId);
    } else {
      this.offline.delete(deviceId);
    }
  }

  /** `account`: the account's label, with `accounts`. */
  sessionUnavailable(why: SessionLoss, account?: string): void {
    this.reasonsOf(account).session = why;
  }

  connectFailed(stage: ConnectStage, error: unknown, account?: string): void {
    this.reasonsOf(account).stopped = { stage, error };
  }

  /** The relay stream has been down too long (and since when), or is back (undefined). */
  deliveryDown(outage: { since: number; refused: boolean } | undefined): void {
    this.relay = outage;
  }

  /**
   * Why `down` (doorbell ids and platform reasons, down longest first) are down: the first one's reason,
   * and for failed subscriptions every doorbell whose subscription failed. `since`: when the first went
   * down, on this machine's clock; `now`: the time on it.
   */
  describe(down: readonly string[], since: number, now: number): Reason {
    const [first] = down;
    const platformTodo = PLATFORM_REASONS[first];
    if (platformTodo !== undefined) {
      return { words: first, todo: platformTodo };
    }
    // The session of the first down doorbell whose account lost it: with one account, that account's.
    const label = this.accountOf.get(first);
    const lost = down.map((key) => this.accountOf.get(key)).find((account) => this.accounts.get(account)?.session !== undefined);
    const session = this.accounts.get(lost)?.session;
    if (session !== undefined) {
      return sessionReason(session, lost);
    }
    if (this.relay !== undefined) {
      return this.relayReason(this.relay.refused, this.relay.since, now);
    }
    if (this.offline.has(first)) {
      return {
        words: `${this.names([first])} is offline in the doorbell service`,
        todo: `Check its Wi-Fi or power; the plugin asks the doorbell service again every 15 minutes, and an alert from it clears this at once.`,
      };
    }
    const failure = this.failures.get(first);
    if (failure !== undefined) {
      const failed = down.filter((deviceId) => this.failures.has(deviceId));
      return { words: `the subscription of ${this.names(failed)} failed (${failure})`, todo: `${KEEPS_TRYING}; check the device ids on ${SETTINGS_PAGE} if it goes on.` };
    }
    const pending = down.filter((deviceId) => !this.failures.has(deviceId));
    return this.stoppedReason(label, since, now) ?? { words: `the subscription of ${this.names(pending)} is not confirmed yet`, todo: `${KEEPS_TRYING}.` };
  }

  private stoppedReason(label: string | undefined, since: number, now: number): Reason | undefined {
    const { settings } = this;
    const { stopped } = this.accounts.get(label) ?? {};
    const of = label === undefined ? '' : ` of ${label}`;
    switch (stopped?.stage) {
      case 'push-endpoint':
        if (settings.push.mode === 'relay') {
          return this.relayReason(false, since, now);
        }
        return {
          words: `the push receiver cannot listen on ${settings.push.direct.host}:${settings.push.direct.port}`,
          todo: `Free port ${settings.push.direct.port}, or choose another push.port, push.host or relay mode on ${SETTINGS_PAGE}.`,
        };
      case 'registration':
        return { words: `the push registration${of} failed (${causeOf(stopped.error, 'doorbell service')})`, todo: `${KEEPS_TRYING}; check doorbellServerUrl on ${SETTINGS_PAGE} if it goes on.` };
      case 'session':
        return { words: `signing in${label === undefined ? '' : ` to ${label}`} failed (${causeOf(stopped.error, 'account service')})`, todo: `${KEEPS_TRYING}; check the account on ${SETTINGS_PAGE} if it goes on.` };
      default:
        return undefined;
    }
  }

  private relayReason(refused: boolean, since: number, now: number): Reason {
    return refused
      ? { words: 'the relay refused access', todo: `Check push.relayToken on ${SETTINGS_PAGE}; ${KEEPS_TRYING.toLowerCase()}.` }
      : {
          words: `the relay has been unreachable since ${clockTime(since, now)}`,
          todo: `Check this Homebridge's internet connection and push.relayUrl on ${SETTINGS_PAGE}; ${KEEPS_TRYING.toLowerCase()}.`,
        };
  }

  private reasonsOf(account: string | undefined): AccountReasons {
    let reasons = this.accounts.get(account);
    if (reasons === undefined) {
      reasons = {};
      this.accounts.set(account, reasons);
    }
    return reasons;
  }

  /** The doorbells' names, the first few of them. */
  private names(deviceIds: readonly string[]): string {
    const names = deviceIds.map((deviceId) => this.settings.doorbells.find((doorbell) => doorbell.deviceId === deviceId)?.name ?? deviceId);
    const shown = names.length > 4 ? [...names.slice(0, 3), `${names.length - 3} more`] : names;
    return shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
  }
}

/**
 * A failed call in a few words, from the error's kind and status only: an error's message may name a
 * path or an address, and these words go to status.json, which the log's masking does not cover.
 */
function causeOf(error: unknown, service: string, notFound?: string): string {
  if (!(error instanceof CloudError)) {
    return 'an unexpected error';
  }
  switch (error.kind) {
    case 'network':
      return `the ${service} cannot be reached`;
    case 'timeout':
      return `the ${service} did not answer in time`;
    case 'insecure':
      return `the ${service} address is not https`;
    case 'http':
    case 'malformed':
      return error.status === 404 && notFound !== undefined ? notFound : `the ${service} answered HTTP ${error.status}`;
    default:
      return `the ${service} refused it`;
  }
}
