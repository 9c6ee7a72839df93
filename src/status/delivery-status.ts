import type { SessionLoss } from '../connection/progress.js';
import { errorCode, type Logger } from '../log.js';
import { DATA_FILES, type PrivateFolder } from '../storage/data-folder.js';
import { JsonFile } from '../storage/json-file.js';
import { CONTROL_SUBTYPES, offUntilKey, type OffUntilKey } from '../values/controls.js';
import { isDeviceId, isJsonObject } from '../values/json.js';
import { isTimestamp } from '../values/time.js';

/**
 * status.json: the file's shape, the alerts' part of it included, how often it is written, and whether
 * its writer still runs.
 */

/**
 * Whether alerts reach this Homebridge, as the Doorbell Alerts sensor shows it, and the times they
 * stopped: what status.json keeps of it, so that the settings page can show it and a restart carries
 * it over. Times are ISO strings; the words never hold a secret.
 */

/** One time alerts stopped. */
export interface Outage {
  /** When the down period that opened the sensor began (at least a minute before it opened). */
  from: string;
  /** When the sensor closed again; null while the outage lasts. */
  to: string | null;
  /** Why, in the words of the warning that said so. */
  reason: string;
  /**
   * Rings and motions that arrived too late to show (dropped as stale after the relay came back);
   * absent from an outage an earlier version wrote.
   */
  late?: number;
}

export interface AlertsHealth {
  /** The sensor is closed: alerts flow. */
  flowing: boolean;
  /** Since when: the start of the outage while it lasts, its end (or the first start) once they flow. */
  since: string;
  /** Why they stopped, while they do not flow. */
  reason: string | null;
}

export interface AlertsRecord {
  alerts: AlertsHealth;
  /** Newest first, at most MAX_OUTAGES. */
  outages: Outage[];
}

/** A night's outages, and more, but never a file that grows without end. */
export const MAX_OUTAGES = 20;

/**
 * The last run's outages, copied, newest first, and the one under way at its shutdown, if any: an
 * outage is made for it when the record lost it.
 */
export function lastRun(previous: Partial<AlertsRecord> | undefined): { outages: Outage[]; open: Outage | undefined } {
  const outages = (previous?.outages ?? []).slice(0, MAX_OUTAGES).map((outage) => ({ ...outage }));
  const alerts = previous?.alerts;
  if (alerts?.flowing !== false) {
    return { outages, open: undefined };
  }
  if (outages[0]?.to === null) {
    return { outages, open: outages[0] };
  }
  const open = { from: alerts.since, to: null, reason: alerts.reason ?? 'unknown', late: 0 };
  return { outages: [open, ...outages].slice(0, MAX_OUTAGES), open };
}

/** Why an outage holds alerts that came too late, when nothing else had stopped them. */
export const CAME_TOO_LATE = 'alerts came too late to show';

/**
 * status.json: what the running plugin knows of its delivery, for the settings page, which runs in
 * another process. Times are ISO strings, null when there is none yet. It never holds a secret: no
 * token, relay topic, receiver secret or e-mail address, since it exists to be shown.
 */

/**
 * Where the session stands: not there yet, in use (an account's session, or the configured doorbell
 * access token), or gone and why.
 */
export type SessionState = 'signing-in' | 'signed-in' | 'token' | SessionLoss;

/**
 * A doorbell, and when each of its switches off for a while turns itself on again (`chimeOffUntil`):
 * null while it is on, off until turned on, or not there; absent in a file of an older version.
 */
export interface DoorbellStatus extends Partial<Record<OffUntilKey, string | null>> {
  deviceId: string;
  name: string;
  /** The motion subscription is confirmed with the session in use. */
  subscribed: boolean;
  /** Why this doorbell's alerts cannot arrive now, in a few plain words; null when they can. */
  fault: string | null;
  lastMotionAt: string | null;
  lastRingAt: string | null;
  /** The battery level in percent, as the Home app shows it; null without a battery to show. Absent from an earlier version's file. */
  battery?: number | null;
  /** Whether the doorbell service reaches the doorbell; null when it has not said. Absent from an earlier version's file. */
  online?: boolean | null;
  /** Since when the doorbell service has said it cannot reach the doorbell; null while it can. */
  offlineSince?: string | null;
  /** With `accounts`: the label of the account it belongs to. */
  label?: string;
}

/**
 * Where one account's session stands, with `accounts` (at the top of the file for the one account
 * of a config without them): never its key, token or e-mail.
 */
export interface AccountStatus {
  label: string;
  session: SessionState;
  /** As the file's own `signedInAt`: when the session this account uses was signed in. */
  signedInAt: string | null;
  registeredAt: string | null;
  nextRefreshAt: string | null;
}

/**
 * Why a notification was not acted on: not a notification at all (a body that failed the checks), a
 * repeated event id, a doorbell that is not configured, a relay message too old to show, or a ring
 * less than 5 s after the doorbell's last press.
 */
export type DropCause = 'invalid' | 'duplicate' | 'unconfigured' | 'stale' | 'flood';

/** Since the plugin started, by cause: forged or unknown traffic after a push address leaked shows here. */
export type DroppedCounts = Record<DropCause, number>;

export interface DeliveryStatus {
  /** The process that writes the file: the settings page checks it still runs. */
  pid: number;
  startedAt: string;
  /** Rewritten at least every minute while the plugin runs, so an old file reads as stopped. */
  updatedAt: string;
  pushMode: 'relay' | 'direct';
  /** Relay mode: whether the relay stream is open, and since when. */
  relay?: { connected: boolean; since: string | null };
  /** Direct mode: whether the push receiver listens. */
  receiver?: { listening: boolean };
  /**
   * These three and `signedInAt` are absent from a file with `accounts`, which has them per account:
   * a reader that finds `accounts` reads them there. The type keeps them required for the readers of
   * the one-account file, which is every file without `accounts`.
   */
  registeredAt: string | null;
  nextRefreshAt: string | null;
  session: SessionState;
  /** With `accounts` in the config: each account's session, in config order. */
  accounts?: AccountStatus[];
  /**
   * When the session the plugin uses was signed in (its `loggedInAt` in session.json), so the settings
   * page can tell whether the plugin has taken up a sign-in made there; null without one. Absent in a
   * status written by an older plugin.
   */
  signedInAt?: string | null;
  doorbells: DoorbellStatus[];
  /** Absent in a file written by an earlier version of the plugin. */
  dropped?: DroppedCounts;
  /**
   * Whether alerts flow, as the Doorbell Alerts sensor shows it, and the times they stopped, newest
   * first. Always written; absent from a file an earlier version wrote.
   */
  alerts?: AlertsHealth;
  outages?: Outage[];
}

/** Every state `session` may name: a record, so that a state added to the type must be added here. */
const SESSION_STATES: Readonly<Record<SessionState, true>> = {
  'signing-in': true,
  'signed-in': true,
  token: true,
  'signed-out': true,
  expired: true,
  'token-refused': true,
};

const DROP_CAUSES: Readonly<Record<DropCause, true>> = { invalid: true, duplicate: true, unconfigured: true, stale: true, flood: true };

/**
 * What the plugin writes, as the types above say; a reader takes other keys too, as a newer plugin may
 * add some. Keys added later (`signedInAt`, `dropped`, `alerts`, `outages`) may be missing: a file an
 * earlier version wrote lacks them, and is still read.
 */
export function isDeliveryStatus(value: unknown): value is DeliveryStatus {
  return (
    isJsonObject(value) &&
    Number.isInteger(value.pid) &&
    (value.pid as number) >= 1 &&
    isTime(value.startedAt) &&
    isTime(value.updatedAt) &&
    (value.pushMode === 'relay' || value.pushMode === 'direct') &&
    absentOr(value.relay, (relay) => isJsonObject(relay) && typeof relay.connected === 'boolean' && isTimeOrNull(relay.since)) &&
    absentOr(value.receiver, (receiver) => isJsonObject(receiver) && typeof receiver.listening === 'boolean') &&
    (value.accounts === undefined ? isSessionStatus(value) : Array.isArray(value.accounts) && value.accounts.every(isAccountStatus)) &&
    absentOr(value.signedInAt, isTimeOrNull) &&
    Array.isArray(value.doorbells) &&
    value.doorbells.every(isDoorbellStatus) &&
    absentOr(value.dropped, (dropped) => isJsonObject(dropped) && Object.keys(DROP_CAUSES).every((cause) => isCount(dropped[cause]))) &&
    absentOr(value.alerts, isAlertsHealth) &&
    absentOr(value.outages, (outages) => Array.isArray(outages) && outages.length <= MAX_OUTAGES && outages.every(isOutage))
  );
}

/** The session fields, at the top of the file or in an account's entry. */
function isSessionStatus(value: Record<string, unknown>): boolean {
  return isTimeOrNull(value.registeredAt) && isTimeOrNull(value.nextRefreshAt) && typeof value.session === 'string' && Object.hasOwn(SESSION_STATES, value.session);
}

function isAccountStatus(value: unknown): value is AccountStatus {
  return isJsonObject(value) && typeof value.label === 'string' && isSessionStatus(value) && isTimeOrNull(value.signedInAt);
}

function isDoorbellStatus(value: unknown): value is DoorbellStatus {
  return (
    isJsonObject(value) &&
    isDeviceId(value.deviceId) &&
    typeof value.name === 'string' &&
    typeof value.subscribed === 'boolean' &&
    (value.fault === null || typeof value.fault === 'string') &&
    isTimeOrNull(value.lastMotionAt) &&
    isTimeOrNull(value.lastRingAt) &&
    absentOr(value.battery, (battery) => battery === null || (Number.isInteger(battery) && (battery as number) >= 0 && (battery as number) <= 100)) &&
    absentOr(value.online, (online) => online === null || typeof online === 'boolean') &&
    absentOr(value.offlineSince, isTimeOrNull) &&
    absentOr(value.label, (label) => typeof label === 'string') &&
    CONTROL_SUBTYPES.every((control) => absentOr(value[offUntilKey(control)], isTimeOrNull))
  );
}

function isAlertsHealth(value: unknown): value is AlertsHealth {
  return isJsonObject(value) && typeof value.flowing === 'boolean' && isTime(value.since) && (value.reason === null || typeof value.reason === 'string');
}

function isOutage(value: unknown): value is Outage {
  return isJsonObject(value) && isTime(value.from) && isTimeOrNull(value.to) && typeof value.reason === 'string' && absentOr(value.late, isCount);
}

function isTime(value: unknown): value is string {
  return typeof value === 'string' && isTimestamp(value);
}

function isTimeOrNull(value: unknown): value is string | null {
  return value === null || isTime(value);
}

function isCount(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0;
}

/** A key added in a later version: a file without it is still one the plugin wrote. */
function absentOr(value: unknown, check: (value: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

/** status.json in the data folder, written atomically under the folder's lock like every file there. */
export function openStatusFile(folder: PrivateFolder, log: Logger): JsonFile<DeliveryStatus> {
  return new JsonFile(folder, DATA_FILES.status, isDeliveryStatus, log);
}

/** How often status.json is written: what a reader judges its freshness by. */
export interface StatusTiming {
  /** Writes start at least this far apart, however often the status changes. */
  minIntervalMs: number;
  /** The status is written at least this often, changed or not: its updatedAt shows the plugin runs. */
  maxIntervalMs: number;
}

export const STATUS_TIMING: Readonly<StatusTiming> = Object.freeze({ minIntervalMs: 1_000, maxIntervalMs: 60_000 });

/** Twice the longest wait between two writes: a status older than this was left by a plugin that stopped. */
export const STALE_AFTER_MS = 2 * STATUS_TIMING.maxIntervalMs;

/**
 * Whether the plugin that wrote `status` still runs on this host: its process is alive, and it wrote
 * recently. The age rules out a file left by a removed plugin, or by a container whose new process
 * happens to have the same pid.
 */
export function writerIsRunning(status: DeliveryStatus, now = Date.now(), isAlive: (pid: number) => boolean = processIsAlive): boolean {
  const ageMs = now - Date.parse(status.updatedAt);
  return Math.abs(ageMs) < STALE_AFTER_MS && isAlive(status.pid);
}

/** Signal 0 only asks: EPERM means the process exists but belongs to another user. */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}
