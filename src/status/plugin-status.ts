import type { ConnectionListener } from '../connection/progress.js';
import { errorMessage, type Logger } from '../log.js';
import type { PrivateFolder } from '../storage/data-folder.js';
import { describeFileError } from '../storage/file-errors.js';
import { type AlertsRecord, type DeliveryStatus, openStatusFile, STATUS_TIMING, type StatusTiming } from './delivery-status.js';
import { type BoardAccount, type BoardDoorbell, StatusBoard } from './status-board.js';

/**
 * The plugin's status: the last run's file read before the first write, then status.json written on
 * one timer.
 */

/**
 * Where the status goes: status.json, replaced whole under the data folder's lock. This plugin is its
 * only writer and never needs what it held, so it is not read first.
 */
export interface StatusSink {
  readonly path: string;
  replace(status: DeliveryStatus): Promise<unknown>;
}

/**
 * Writes the status when it changed, at most once per `minIntervalMs`, and at least every
 * `maxIntervalMs`. A change never writes at once: it is told from the path that delivers an alert to
 * HomeKit, which must not wait for a file, so it only plans a write on a timer. One timer, one write
 * at a time, and nothing left running once stopped.
 */
export class StatusWriter {
  private timer: NodeJS.Timeout | undefined;
  /** When the planned write is due (on `now`'s clock); Infinity when none is planned. */
  private dueAt = Infinity;
  private lastWriteAt = -Infinity;
  private writing: Promise<void> | undefined;
  /** Something changed while a write was under way: another follows it. */
  private changedMeanwhile = false;
  /** Something changed since the last write began: stop writes it rather than lose it. */
  private unwritten = false;
  private failing = false;
  private stopped = false;

  constructor(
    private readonly sink: StatusSink,
    private readonly snapshot: () => DeliveryStatus,
    private readonly log: Logger,
    private readonly timing: StatusTiming = STATUS_TIMING,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Something in the status changed: it is written within `minIntervalMs`. */
  changed(): void {
    if (this.stopped) {
      return;
    }
    this.unwritten = true;
    if (this.writing !== undefined) {
      this.changedMeanwhile = true;
      return;
    }
    this.planAt(Math.max(this.now(), this.lastWriteAt + this.timing.minIntervalMs));
  }

  /**
   * Clears the timer, waits for a write under way, and writes a change not written yet (an outage that
   * closed a moment before a restart must not read as open after it); nothing is written after.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    if (this.unwritten) {
      await this.write();
    }
  }

  /** An earlier plan stands; a later one is brought forward. */
  private planAt(at: number): void {
    if (at >= this.dueAt) {
      return;
    }
    clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = setTimeout(() => this.due(), Math.max(0, Math.ceil(at - this.now())));
    // Homebridge's own servers keep the process alive; a pending status write must not hold it open on exit.
    this.timer.unref();
  }

  /** A timer may fire a fraction of a millisecond before `now` says it is due: then it waits out the rest. */
  private due(): void {
    const { dueAt } = this;
    this.timer = undefined;
    this.dueAt = Infinity;
    if (this.now() < dueAt) {
      this.planAt(dueAt);
    } else {
      this.writing = this.write().finally(() => this.afterWrite());
    }
  }

  private async write(): Promise<void> {
    // The next write is timed from when this one starts.
    this.lastWriteAt = this.now();
    this.changedMeanwhile = false;
    this.unwritten = false;
    try {
      // Inside: a snapshot that throws is said as a failed write, never a rejection nobody handles.
      await this.sink.replace(this.snapshot());
      this.failing = false;
    } catch (error) {
      // Said once, not every minute: the settings page then reads the plugin as not running.
      if (!this.failing) {
        this.log.warn(`Could not write ${this.sink.path} for the settings page: ${errorMessage(error)}`);
      }
      this.failing = true;
    }
  }

  private afterWrite(): void {
    this.writing = undefined;
    if (this.stopped) {
      return;
    }
    if (this.changedMeanwhile) {
      this.changed();
    } else {
      this.planAt(this.lastWriteAt + this.timing.maxIntervalMs);
    }
  }
}

export interface PluginStatusOptions {
  doorbells: readonly BoardDoorbell[];
  pushMode: 'relay' | 'direct';
  /** The configured doorbell access token is used instead of an account's session. */
  usesToken: boolean;
  /** With `accounts` in the config: each account, whose session status.json shows apart. */
  accounts?: readonly BoardAccount[];
  folder: PrivateFolder;
  log: Logger;
  timing?: StatusTiming;
  /** What status.json is written through: the file itself when absent; the soak puts a full disk in between. */
  sink?: (file: StatusSink) => StatusSink;
  /**
   * Whether alerts flow, and the outages: handed what the last run wrote before the first write (so
   * they survive a restart), then written with the rest. When that file cannot be read at first, they
   * are handed nothing at once (the sensor decides meanwhile) and the record again once it is read.
   */
  alerts?: { restoreRecord(previous: Partial<AlertsRecord> | undefined): void; record(): AlertsRecord | undefined };
}

/**
 * How long a status.json that cannot be read (too many open files, an I/O error) is tried again at
 * launch, and how often: a passing fault should not cost a night's outages.
 */
const HISTORY_READ_WAIT_MS = 60_000;
const HISTORY_READ_RETRY_MS = 2_000;

/**
 * status.json for the settings page, kept by the running plugin from launch to shutdown: `board`
 * takes what happens, and every change is written soon after, never on the way it was told.
 */
export class PluginStatus {
  readonly board: StatusBoard;
  private readonly writer: StatusWriter;
  private readonly file: ReturnType<typeof openStatusFile>;
  private readonly alerts: PluginStatusOptions['alerts'];
  private readonly log: Logger;
  /** Nothing is written before the last run's file has been read, or given up. */
  private started = false;
  private stopped = false;
  private launchedAt = 0;
  /** The last run's file could not be read yet: the alerts rule runs without it meanwhile. */
  private historyAwaited = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor({ doorbells, pushMode, usesToken, accounts, folder, log, timing, alerts, sink = (file) => file }: PluginStatusOptions) {
    this.file = openStatusFile(folder, log);
    this.alerts = alerts;
    this.log = log;
    this.writer = new StatusWriter(sink(this.file), () => this.snapshot(), log, timing);
    this.board = new StatusBoard(doorbells, { pushMode, usesToken, accounts }, () => this.changed());
  }

  /** The last run's file is read, then the first status is written at once and kept fresh. */
  start(): void {
    this.launchedAt = performance.now();
    this.readLastRun();
  }

  /**
   * A read that fails is not a missing file: it is tried again for up to a minute, and nothing is
   * written meanwhile, since the write would replace the very file whose outages are awaited (the
   * settings page shows the last run's file a little longer, which is better than losing them). The
   * alerts rule does not wait: it decides from the first failure as it would without a history, and
   * the history joins what it decided once it is read. A missing file is no history, and no fault.
   */
  private readLastRun(): void {
    this.retryTimer = undefined;
    void this.file.read().then(
      (previous) => this.begin(previous),
      (error: unknown) => this.readFailed(error),
    );
  }

  private readFailed(error: unknown): void {
    if (this.stopped) {
      return;
    }
    if (!this.historyAwaited) {
      this.historyAwaited = true;
      this.alerts?.restoreRecord(undefined);
    }
    if (performance.now() - this.launchedAt + HISTORY_READ_RETRY_MS > HISTORY_READ_WAIT_MS) {
      this.log.warn(
        `Could not read ${this.file.path} for a minute (${describeFileError(error)}): the Doorbell Alerts outages before this start are given up, and the file is written anew.`,
      );
      this.begin(undefined);
      return;
    }
    this.log.debug(`Could not read ${this.file.path} (${describeFileError(error)}): trying again in ${HISTORY_READ_RETRY_MS / 1_000} s; it is not written till then.`);
    this.retryTimer = setTimeout(() => this.readLastRun(), HISTORY_READ_RETRY_MS);
    // Homebridge's own servers keep the process alive; stop() clears it on an orderly shutdown.
    this.retryTimer.unref();
  }

  private begin(previous: DeliveryStatus | undefined): void {
    if (this.stopped) {
      return;
    }
    this.alerts?.restoreRecord(previous);
    this.started = true;
    this.writer.changed();
  }

  /** Something changed that the status shows: it is written soon, never at once. */
  changed(): void {
    if (this.started) {
      this.writer.changed();
    }
  }

  /** A file still awaited is left as it is: the next launch reads it. */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    return this.writer.stop();
  }

  private snapshot(): DeliveryStatus {
    return { ...this.board.snapshot(), ...this.alerts?.record() };
  }

  /** `listener`, with what the connection (of the account labelled `account`, with `accounts`) tells it recorded on the board as well. */
  following(listener: ConnectionListener, account?: string): ConnectionListener {
    const { board } = this;
    return {
      subscribed: (deviceId) => {
        listener.subscribed(deviceId);
        board.subscribed(deviceId);
      },
      subscriptionFailed: (deviceId, error) => {
        listener.subscriptionFailed(deviceId, error);
        board.subscriptionFailed(deviceId, error);
      },
      sessionUnavailable: (why) => {
        listener.sessionUnavailable(why);
        board.sessionUnavailable(why, account);
      },
      sessionInUse: (signedInAt) => {
        listener.sessionInUse?.(signedInAt);
        board.sessionInUse(signedInAt, account);
      },
      progressed: (progress) => {
        listener.progressed?.(progress);
        board.connectionProgressed(progress, account);
      },
      connectFailed: (stage, error) => listener.connectFailed?.(stage, error),
      doorbellListRead: (list) => listener.doorbellListRead?.(list),
    };
  }
}
