import type { AlertsHealth, Outage } from '../alerts/alerts-state.js';
import type { SessionLoss } from '../connection/progress.js';
import type { Logger } from '../log.js';
import { DATA_FILES } from '../session/data-folder.js';
import { JsonFile } from '../session/json-file.js';
import type { PrivateFolder } from '../session/private-folder.js';
import { deliveryStatus } from './status-check.generated.js';

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

export interface DoorbellStatus {
  deviceId: string;
  name: string;
  /** The motion subscription is confirmed with the session in use. */
  subscribed: boolean;
  /** Why this doorbell's alerts cannot arrive now, in a few plain words; null when they can. */
  fault: string | null;
  lastMotionAt: string | null;
  lastRingAt: string | null;
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
  registeredAt: string | null;
  nextRefreshAt: string | null;
  session: SessionState;
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

/** Against status-schema.ts, as Ajv compiled it when the code was written (`npm run validators`). */
export function isDeliveryStatus(value: unknown): value is DeliveryStatus {
  return deliveryStatus(value);
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
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
