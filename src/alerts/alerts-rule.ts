import type { Logger } from '../log.js';
import { CAME_TOO_LATE, lastRun, MAX_OUTAGES, type AlertsRecord, type Outage } from '../status/delivery-status.js';
import type { Reason } from './reasons.js';
import { describeDuration } from '../values/time.js';

/** Down this long without a break, alerts count as stopped: a restart or a relay reconnect takes less. */
export const ALERTS_OPEN_AFTER_MS = 60_000;

/**
 * The clocks and the timer the rule runs on. Durations go by a monotonic clock, so a clock set
 * forward or back neither opens nor closes anything; the times users read go by the wall clock.
 */
export interface AlertsClock {
  monotonic(): number;
  wall(): number;
  /** Runs `action` after `ms`; returns what cancels it. */
  after(ms: number, action: () => void): () => void;
}

export const SYSTEM_CLOCK: AlertsClock = {
  monotonic: () => performance.now(),
  wall: () => Date.now(),
  after: (ms, action) => {
    const timer = setTimeout(action, ms);
    // Homebridge's own servers keep the process alive; dispose() clears the timer on an orderly shutdown.
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface AlertsRuleOptions {
  /** What is down from the start: every doorbell until it is first confirmed, or the whole plugin. */
  down: readonly string[];
  /** Why `down` (longest first) are down; `since`: when the first went down, on the wall clock. */
  describe: (down: readonly string[], since: number, now: number) => Reason;
  log: Logger;
  /** The sensor's state, each time the rule decides it: open (alerts stopped) or closed. */
  onShow: (open: boolean) => void;
  /** What `record()` holds changed. */
  onChange: () => void;
  openAfterMs?: number;
  clock?: AlertsClock;
}

/**
 * Whether alerts flow: they stop (the sensor opens, with one warning) once something has been down
 * for `openAfterMs` without a break, and flow again (it closes, with one info line) the moment
 * nothing is down. Nothing is decided before `restore` has handed over what the last run left, so
 * an outage that outlived a restart stays one outage, and the sensor shows its cached state till then.
 */
export class AlertsRule {
  /** What is down and since when (monotonic), longest first: a key comes back at the end. */
  private readonly downSince = new Map<string, number>();
  private readonly openAfterMs: number;
  private readonly clock: AlertsClock;
  private decided = false;
  /** The first decision of this run, and when (wall clock): what a history read late is joined to. */
  private firstDecision: { open: boolean; at: number } | undefined;
  private restored = false;
  /** The last run's record was taken (at launch, or late); a missing one counts once the rule runs. */
  private historyTaken = false;
  private disposed = false;
  /** The outage under way, and when it began on the monotonic clock. */
  private current: { outage: Outage; from: number } | undefined;
  private outages: Outage[] = [];
  /** When the sensor's state began, on the wall clock. */
  private since: number;
  private cancelTimer: (() => void) | undefined;
  /** The outage under way when the relay stream came back: what its catch-up drops as stale belongs to it. */
  private relayBackDuring: Outage | undefined;
  /** The current relay stream's catch-up: the outage its stale drops count in, and whether it is their own. */
  private catchUp: { outage: Outage | undefined; ownOutage: boolean } = { outage: undefined, ownOutage: false };

  /** Whether alerts have stopped: there is an outage under way. */
  private get open(): boolean {
    return this.current !== undefined;
  }

  constructor(private readonly options: AlertsRuleOptions) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.openAfterMs = options.openAfterMs ?? ALERTS_OPEN_AFTER_MS;
    const now = this.clock.monotonic();
    options.down.forEach((key) => this.downSince.set(key, now));
    this.since = this.clock.wall();
  }

  /**
   * What the last run left in status.json (nothing, without one); the rule decides from now on. When
   * the file could not be read at launch, the rule is started with nothing, so that the sensor decides
   * meanwhile as it would without a history, and the record follows once it is read: then it is joined
   * to what was decided since.
   */
  restore(previous: Partial<AlertsRecord> | undefined): void {
    if (this.restored) {
      this.joinHistory(previous);
      return;
    }
    this.restored = true;
    this.historyTaken = previous !== undefined;
    this.carryOver(previous);
    this.evaluate();
  }

  /** The last run's outages, and the one still under way at its shutdown, become this run's. */
  private carryOver(previous: Partial<AlertsRecord> | undefined): void {
    const { outages, open } = lastRun(previous);
    // Alerts that came too late before the history was read are kept, as the newest.
    this.outages = [...this.outages, ...outages].slice(0, MAX_OUTAGES);
    if (previous?.alerts !== undefined) {
      this.since = Date.parse(previous.alerts.since);
    }
    if (open !== undefined) {
      this.current = { outage: open, from: this.monotonicAt(open.from) };
    }
  }

  /**
   * The last run's record, read only after the rule began deciding without it. The sensor stays as it
   * was decided: only the record changes. An outage under way at the last shutdown went on until the
   * first decision of this run: if that decision opened the sensor, it is this run's first outage,
   * which takes the earlier start and reason (one outage across the restart, as when the record comes
   * in time); if it closed the sensor, the outage ended then. No line is said for it so late.
   */
  private joinHistory(previous: Partial<AlertsRecord> | undefined): void {
    if (previous === undefined || this.historyTaken) {
      return;
    }
    this.historyTaken = true;
    const first = this.firstDecision;
    if (first === undefined) {
      // Nothing decided yet: as if the record had come at launch.
      this.carryOver(previous);
      return;
    }
    const { outages, open } = lastRun(previous);
    let own = this.outages;
    if (open !== undefined) {
      const continued = first.open ? own.at(-1) : undefined;
      open.to = continued === undefined ? new Date(first.at).toISOString() : continued.to;
      if (continued !== undefined) {
        open.late = (open.late ?? 0) + (continued.late ?? 0);
      }
      own = own.filter((outage) => outage !== continued);
      if (continued !== undefined && this.current?.outage === continued) {
        this.current = { outage: open, from: this.monotonicAt(open.from) };
      }
    }
    this.outages = [...own, ...outages].slice(0, MAX_OUTAGES);
    if (this.current !== undefined) {
      this.since = Date.parse(this.current.outage.from);
    } else if (own.length > 0 || open !== undefined) {
      this.since = Date.parse(this.outages[0].to as string);
    } else if (previous.alerts !== undefined) {
      this.since = Date.parse(previous.alerts.since);
    }
    this.options.onChange();
  }

  /** A wall time, on the monotonic clock. */
  private monotonicAt(iso: string): number {
    return this.clock.monotonic() - (this.clock.wall() - Date.parse(iso));
  }

  /**
   * Whether `key` (a doorbell's id, or a reason the whole plugin is down) is down. `since`, on the
   * monotonic clock, when it went down before it was told: a fault dated earlier than the moment it
   * was found (a relay stream that went quiet without closing). Now when absent, and never later.
   */
  setDown(key: string, down: boolean, since?: number): void {
    if (down === this.downSince.has(key)) {
      return;
    }
    if (down) {
      const now = this.clock.monotonic();
      this.markDown(key, Math.min(since ?? now, now));
    } else {
      this.downSince.delete(key);
    }
    this.evaluate();
  }

  /**
   * The relay stream is back after it had been down too long: the stale drops of the catch-up that
   * follows belong to the outage under way now, which this very reconnect may end.
   */
  relayBack(): void {
    this.relayBackDuring = this.current?.outage;
  }

  /** A relay stream opened: what it drops as stale from now on is one catch-up. */
  catchUpBegins(): void {
    this.catchUp = { outage: this.relayBackDuring, ownOutage: false };
    this.relayBackDuring = undefined;
  }

  /**
   * A ring or motion arrived `ageMs` after it was sent, too late to show: counted in the outage the
   * reconnect ended, or the one under way; else the catch-up's stale drops make one outage of their
   * own, from the oldest one's sending to now, with one warning.
   */
  late(ageMs: number): void {
    const now = this.clock.wall();
    const { catchUp } = this;
    const outage = catchUp.outage ?? this.current?.outage;
    if (outage === undefined) {
      const own = { from: new Date(now - ageMs).toISOString(), to: new Date(now).toISOString(), reason: CAME_TOO_LATE, late: 1 };
      this.catchUp = { outage: own, ownOutage: true };
      this.outages = [own, ...this.outages].slice(0, MAX_OUTAGES);
      this.options.log.warn(
        `Doorbell alerts came too late to show: one sent ${describeDuration(ageMs, 'rough')} ago reached this Homebridge only when the push relay stream came back. Check this Homebridge's internet connection if it happens again.`,
      );
    } else {
      outage.late = (outage.late ?? 0) + 1;
      if (catchUp.ownOutage) {
        outage.from = new Date(Math.min(Date.parse(outage.from), now - ageMs)).toISOString();
        outage.to = new Date(now).toISOString();
      } else if (catchUp.outage === undefined) {
        this.catchUp = { outage, ownOutage: false };
      }
    }
    this.options.onChange();
  }

  /** For status.json. */
  record(): AlertsRecord {
    return {
      alerts: { flowing: !this.open, since: new Date(this.since).toISOString(), reason: this.current?.outage.reason ?? null },
      outages: this.outages.map((outage) => ({ ...outage })),
    };
  }

  dispose(): void {
    this.disposed = true;
    this.cancelTimer?.();
  }

  /** Longest first, whatever order they were told in: a key dated before others goes before them. */
  private markDown(key: string, since: number): void {
    const entries = [...this.downSince, [key, since] as const].sort(([, a], [, b]) => a - b);
    this.downSince.clear();
    entries.forEach(([other, at]) => this.downSince.set(other, at));
  }

  private evaluate(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (!this.restored || this.disposed) {
      return;
    }
    const [first] = this.downSince.values();
    if (first === undefined) {
      this.decide(false);
    } else if (!(this.open && this.decided)) {
      const downForMs = this.clock.monotonic() - first;
      if (downForMs >= this.openAfterMs) {
        this.decide(true);
      } else {
        this.cancelTimer = this.clock.after(this.openAfterMs - downForMs, () => this.evaluate());
      }
    }
  }

  /** The first decision at launch replaces the cached state, whatever it was. */
  private decide(open: boolean): void {
    const first = !this.decided;
    this.decided = true;
    this.firstDecision ??= { open, at: this.clock.wall() };
    if (open) {
      this.stopped(first && this.open);
    } else if (this.open) {
      this.flowingAgain();
    }
    this.options.onShow(open);
    this.options.onChange();
  }

  /** `goesOn`: an outage from before the restart, still open at launch: one outage, told once more. */
  private stopped(goesOn: boolean): void {
    const down = [...this.downSince.keys()];
    const from = this.downSince.get(down[0]) as number;
    const now = this.clock.wall();
    const fromWall = now - (this.clock.monotonic() - from);
    const reason = this.options.describe(down, fromWall, now);
    if (!goesOn) {
      const outage = { from: new Date(fromWall).toISOString(), to: null, reason: reason.words, late: 0 };
      this.current = { outage, from };
      this.outages = [outage, ...this.outages].slice(0, MAX_OUTAGES);
      this.since = fromWall;
    }
    this.options.log.warn(`Doorbell alerts stopped: ${reason.words}. ${reason.todo}`);
  }

  private flowingAgain(): void {
    const { current } = this;
    const now = this.clock.wall();
    this.since = now;
    this.current = undefined;
    if (current === undefined) {
      return;
    }
    current.outage.to = new Date(now).toISOString();
    const lasted = describeDuration(this.clock.monotonic() - current.from, 'rough');
    this.options.log.info(`Doorbell alerts are flowing again after ${lasted} (${current.outage.reason})`);
  }
}
