import { errorMessage, type Logger } from '../log.js';
import { STATUS_TIMING, type DeliveryStatus, type StatusTiming } from './delivery-status.js';

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
    // The status first: a write starts when it is handed to the file, so the next one is timed from then.
    const status = this.snapshot();
    this.lastWriteAt = this.now();
    this.changedMeanwhile = false;
    this.unwritten = false;
    try {
      await this.sink.replace(status);
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
