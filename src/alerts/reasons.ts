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

const SESSION_REASONS: Readonly<Record<SessionLoss, Reason>> = {
  expired: { words: 'the session expired', todo: SIGN_IN_AGAIN },
  'signed-out': { words: 'signed out', todo: SIGN_IN_AGAIN },
  'token-refused': { words: 'the doorbell access token was refused', todo: `Replace doorbellAccessToken on ${SETTINGS_PAGE}, then restart Homebridge.` },
};

export interface ReasonSettings {
  doorbells: ReadonlyArray<{ deviceId: string; name: string }>;
  /** Where notifications arrive: the receiver's address names what cannot listen. */
  push: { mode: 'relay' | 'direct'; direct: { host: string; port: number } };
}

/**
 * Why doorbells are down, kept from what the connection and the push endpoint tell the platform:
 * a session lost, the relay stream down, a subscription failed, an attempt to connect stopped. Asked
 * only when the sensor opens, so keeping it up to date costs a field or two.
 */
export class DownReasons {
  private session: SessionLoss | undefined;
  private relay: { since: number; refused: boolean } | undefined;
  private stopped: { stage: ConnectStage; error: unknown } | undefined;
  /** Why each doorbell's subscription failed, until one succeeds. */
  private readonly failures = new Map<string, string>();
  /** The doorbells the doorbell service says it cannot reach. */
  private readonly offline = new Set<string>();

  constructor(private readonly settings: ReasonSettings) {}

  subscribed(deviceId: string): void {
    this.failures.delete(deviceId);
    this.session = undefined;
    this.stopped = undefined;
  }

  subscriptionFailed(deviceId: string, error: unknown): void {
    this.failures.set(deviceId, causeOf(error, 'doorbell service', 'the doorbell service does not know this device id'));
    this.stopped = undefined;
  }

  /** The doorbell service says it cannot reach the doorbell (true), or no longer says so. */
  doorbellOffline(deviceId: string, offline: boolean): void {
    if (offline) {
      this.offline.add(deviceId);
    } else {
      this.offline.delete(deviceId);
    }
  }

  sessionUnavailable(why: SessionLoss): void {
    this.session = why;
  }

  connectFailed(stage: ConnectStage, error: unknown): void {
    this.stopped = { stage, error };
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
    if (this.session !== undefined) {
      return SESSION_REASONS[this.session];
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
    return this.stoppedReason(since, now) ?? { words: `the subscription of ${this.names(pending)} is not confirmed yet`, todo: `${KEEPS_TRYING}.` };
  }

  private stoppedReason(since: number, now: number): Reason | undefined {
    const { stopped, settings } = this;
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
        return { words: `the push registration failed (${causeOf(stopped.error, 'doorbell service')})`, todo: `${KEEPS_TRYING}; check doorbellServerUrl on ${SETTINGS_PAGE} if it goes on.` };
      case 'session':
        return { words: `signing in failed (${causeOf(stopped.error, 'account service')})`, todo: `${KEEPS_TRYING}; check the account on ${SETTINGS_PAGE} if it goes on.` };
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
