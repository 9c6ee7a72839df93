import type { Logger } from '../log.js';

/** Waiting for Homebridge's Matter registrations, in pauses that end when the plugin stops. */

/**
 * Waits that end early when their owner stops: each resolves true after its time, or false at once
 * when disposed, so no loop that waits outlives the plugin and no timer is left behind.
 */
export class Pauses {
  /** Each pending wait's way to cancel its timer and settle its promise with false. */
  private readonly pending = new Set<() => void>();
  private stopped = false;

  get disposed(): boolean {
    return this.stopped;
  }

  /** 0 waits for the next turn of the event loop (after I/O), anything else for that many milliseconds. */
  pause(ms: number): Promise<boolean> {
    if (this.stopped) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const finish = (completed: boolean): void => {
        this.pending.delete(cancel);
        resolve(completed);
      };
      let cancel: () => void;
      if (ms === 0) {
        const immediate = setImmediate(() => finish(true));
        cancel = () => {
          clearImmediate(immediate);
          finish(false);
        };
      } else {
        const timer = setTimeout(() => finish(true), ms);
        cancel = () => {
          clearTimeout(timer);
          finish(false);
        };
      }
      this.pending.add(cancel);
    });
  }

  dispose(): void {
    this.stopped = true;
    [...this.pending].forEach((cancel) => cancel());
  }
}

/** How the plugin waits on Homebridge to register its Matter devices; tests run the same code faster. */
export interface MatterTiming {
  /** The first pause before asking Homebridge again; doubled while it has not answered, up to `longestCheckMs`. */
  firstCheckMs: number;
  longestCheckMs: number;
  /** After this, registrations not done yet are told of, once; they are still waited for, until shutdown. */
  slowAfterMs: number;
}

/**
 * Homebridge registers a device in milliseconds to tens of them, one after another: asked again soon,
 * then less and less often, so that a bridge busy registering hundreds of devices is not asked much.
 * A few hundred devices take tens of seconds on a slow machine; a minute is worth a warning.
 */
export const MATTER_TIMING: MatterTiming = { firstCheckMs: 10, longestCheckMs: 2_000, slowAfterMs: 60_000 };

/** Homebridge registers at most this many Matter devices on one bridge, and refuses the rest. */
export const HOMEBRIDGE_DEVICE_LIMIT = 1_000;

/**
 * One launch's wait for Homebridge to register the doorbells' devices, counted as they answer. A
 * single check is under way at a time, and the pause between checks grows while nothing changes.
 * If some are still not registered after `slowAfterMs`, a warning says how far Homebridge got, and
 * whether it stopped (as at its device limit) or is only slow; once all are, a line says so.
 */
export class RegistrationWait {
  private readonly started = performance.now();
  private lastProgress = this.started;
  private registered = 0;
  private readonly total: number;
  /** The device waited for: the first until Homebridge has taken the registration. */
  private waitingFor: string | undefined;
  private warned = false;
  /** The warning's timer: it runs apart from the checks, so that a call into Homebridge that never returns is told of too. */
  private readonly watchdog = new Pauses();

  constructor(
    /** The devices' names, in the order Homebridge registers them. */
    names: readonly string[],
    /** The checks' pauses, ended when the plugin stops. */
    private readonly pauses: Pauses,
    private readonly log: Logger,
    private readonly timing: MatterTiming,
  ) {
    this.total = names.length;
    this.waitingFor = names[0];
    if (this.total > 0) {
      void this.watchdog.pause(timing.slowAfterMs).then((elapsed) => elapsed && this.warnIfSlow());
    }
  }

  /**
   * Resolves true once `done` holds, asking at once and then after growing pauses; false when the
   * plugin stopped meanwhile. `name`: the device waited for, for the warning.
   */
  async until(done: () => Promise<boolean>, name: string): Promise<boolean> {
    this.waitingFor = name;
    for (let pause = this.timing.firstCheckMs; !(await done()); pause = Math.min(pause * 2, this.timing.longestCheckMs)) {
      if (!(await this.pauses.pause(pause))) {
        return false;
      }
    }
    return !this.pauses.disposed;
  }

  /** One more device registered. */
  progressed(): void {
    this.registered += 1;
    this.lastProgress = performance.now();
    if (this.registered === this.total) {
      this.watchdog.dispose();
      if (this.warned) {
        this.log.info(`Matter: Homebridge has registered all ${this.total} devices of the doorbells, after ${seconds(this.lastProgress - this.started)} s`);
      }
    }
  }

  dispose(): void {
    this.watchdog.dispose();
  }

  private warnIfSlow(): void {
    if (this.registered >= this.total) {
      return;
    }
    this.warned = true;
    const now = performance.now();
    const sofar = `Homebridge has registered ${this.registered} of the doorbells' ${this.total} Matter devices in ${seconds(now - this.started)} s`;
    const stalled = now - this.lastProgress >= this.timing.slowAfterMs / 2;
    if (!stalled) {
      this.log.warn(`Matter: ${sofar}, slowly; the others show over Matter as it registers them`);
      return;
    }
    const limit =
      this.total > HOMEBRIDGE_DEVICE_LIMIT
        ? `: a bridge has at most ${HOMEBRIDGE_DEVICE_LIMIT}, so give some doorbells a child bridge of their own`
        : `. If Homebridge's log says the bridge has reached its limit of ${HOMEBRIDGE_DEVICE_LIMIT} Matter devices, give some doorbells a child bridge of their own`;
    this.log.warn(`Matter: ${sofar}, none for ${seconds(now - this.lastProgress)} s; ${this.waitingFor} and those after it show nothing over Matter until it does${limit}`);
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 1000);
}
