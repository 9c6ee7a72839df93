/**
 * Simulated time with real sockets: @sinonjs/fake-timers stands in for setTimeout, setInterval, Date
 * and performance, so a week of the production schedule passes in minutes, while every socket, file
 * and HTTP request stays real. Time moves one timer at a time, and only once the real work the last
 * timer started (a request, a file write, a line on a stream) has finished: so an answer never
 * arrives late by the simulated clock, and a 100 s watchdog never fires on a stream whose keepalive
 * is still on its way through the loopback.
 *
 * The host's clock can be set apart from true time (a clock jump): Date moves with it, while
 * performance.now(), the timers and `now` here (true time) do not.
 */
import { install, type Clock } from '@sinonjs/fake-timers';
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { createRequire, syncBuiltinESMExports } from 'node:module';

/**
 * A part of the process whose timers are told apart from the rest's: a platform the soak may kill as
 * the system kills a process. Its timers are made in its async context and run in it, so that what
 * they start belongs to it too; once it is dead, none of them fires and no new one is made.
 */
export interface TimerScope {
  readonly alive: boolean;
}

/** The scope the code running now belongs to; none for the soak itself, the simulator and the relay. */
export const timerScopes = new AsyncLocalStorage<TimerScope>();

/** The fake clock's own record of its timers, which its API does not list. */
interface ClockTimer {
  id: number;
  type: string;
  func: unknown;
}

type TimerMaker = (callback: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => unknown;

/** Taken before the clock is installed: settling waits on the real event loop. */
const realSetImmediate = setImmediate;
const realMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Turns of the event loop with nothing happening after which the real work counts as finished. */
const QUIET_TURNS = 3;

/** Real work that takes longer than this (a stalled disk) is left to finish while time moves on. */
const SETTLE_LIMIT_MS = 2_000;

/** Steps at one simulated moment beyond which a timer that keeps rescheduling itself at once is a bug. */
const MAX_STEPS_AT_ONE_MOMENT = 100_000;

/**
 * Requests under way in Node's sense (a file operation, a connect, a write, a DNS lookup): each ends
 * with a callback still to run. Handles (sockets, servers, timers) are not requests.
 */
const IN_FLIGHT = /Req|ConnectWrap|WriteWrap|ShutdownWrap/;

/** Every callback Node runs: a change in the count between two turns means something happened. */
let callbacks = 0;
const activity = createHook({
  before() {
    callbacks += 1;
  },
});

function requestsInFlight(): number {
  return process.getActiveResourcesInfo().filter((kind) => IN_FLIGHT.test(kind)).length;
}

function turn(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

export class SimulatedTime {
  /** Timers of this class's own (the marker of runUntil), left out of the count of pending ones. */
  private ownTimers = 0;
  private hostOffsetMs = 0;
  /** Callbacks a turn of the settling loop itself causes, measured while nothing else runs. */
  private ownCallbacksPerTurn = 0;
  /** The timers made in a scope, by the callback the clock holds: cleared with the scope. */
  private readonly scopeOf = new WeakMap<object, TimerScope>();
  /** While runUntil runs: ends it at an earlier moment, for an event planned while time runs. */
  private wake: ((atMs: number) => void) | undefined;
  /** Settles that hit SETTLE_LIMIT_MS: time moved on with real work still under way. */
  slowSettles = 0;
  /** Errors thrown out of a timer's callback: uncaught in a real process. */
  readonly timerErrors: unknown[] = [];

  private constructor(private readonly clock: Clock) {}

  /**
   * Installs the fake clock at `startMs` (ms since the epoch). Call before the plugin, the simulator
   * and the relay are loaded, so that every module takes its timers from it.
   */
  static async install(startMs: number): Promise<SimulatedTime> {
    const clock = install({ now: startMs, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
    // ES modules' named imports of node:timers and node:timers/promises follow the faked functions only after this.
    syncBuiltinESMExports();
    activity.enable();
    const time = new SimulatedTime(clock);
    time.scopeTimers();
    await time.calibrate();
    return time;
  }

  /**
   * setTimeout and setInterval as the fake clock makes them, but a timer made within a scope runs in
   * its async context and is recorded as its own; a dead scope's is made already cleared. The global
   * functions, node:timers and the clock's own (which node:timers/promises calls) are all replaced.
   */
  private scopeTimers(): void {
    const require = createRequire(import.meta.url);
    const timersModule = require('node:timers') as Record<string, unknown>;
    const clock = this.clock as unknown as Record<'setTimeout' | 'setInterval', TimerMaker & { hadOwnProperty?: boolean }> & Record<'clearTimeout' | 'clearInterval', (timer: unknown) => void>;
    for (const [name, clear] of [
      ['setTimeout', 'clearTimeout'],
      ['setInterval', 'clearInterval'],
    ] as const) {
      const make = clock[name].bind(this.clock);
      const scoped: TimerMaker = (callback, delay, ...args) => {
        const scope = timerScopes.getStore();
        if (scope === undefined) {
          return make(callback, delay, ...args);
        }
        if (!scope.alive) {
          const refused = make(() => undefined, delay);
          clock[clear](refused);
          return refused;
        }
        const bound = AsyncLocalStorage.bind(callback);
        this.scopeOf.set(bound, scope);
        return make(bound, delay, ...args);
      };
      // The clock puts the original back at uninstall only when it knows the global had its own.
      const replacement = Object.assign(scoped, { hadOwnProperty: clock[name].hadOwnProperty });
      clock[name] = replacement;
      (globalThis as Record<string, unknown>)[name] = replacement;
      timersModule[name] = replacement;
    }
    // The clock's own promise of a timeout keeps each abort listener in a map of its own until the
    // timer fires or the signal aborts: a scope's must go with the scope, so a scope gets this one.
    const promises = require('node:timers/promises') as Record<'setTimeout', (delay?: number, value?: unknown, options?: { signal?: AbortSignal }) => Promise<unknown>>;
    const clockSleep = promises.setTimeout;
    promises.setTimeout = (delay, value, options = {}) => {
      if (timerScopes.getStore() === undefined) {
        return clockSleep(delay, value, options);
      }
      const { signal } = options;
      return new Promise((resolve, reject) => {
        if (signal?.aborted === true) {
          reject(signal.reason as Error);
          return;
        }
        const onAbort = (): void => {
          clock.clearTimeout(timer);
          reject(signal?.reason as Error);
        };
        const timer = clock.setTimeout(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        }, delay);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    };
    syncBuiltinESMExports();
  }

  /** The timers of `scope` still pending. */
  timersOf(scope: TimerScope): number {
    return this.clockTimers().filter(({ func }) => typeof func === 'function' && this.scopeOf.get(func) === scope).length;
  }

  /** Clears every pending timer of `scope`, as the end of its process would. */
  clearTimersOf(scope: TimerScope): number {
    const mine = this.clockTimers().filter(({ func }) => typeof func === 'function' && this.scopeOf.get(func) === scope);
    for (const { id, type } of mine) {
      if (type === 'Interval') {
        this.clock.clearInterval(id);
      } else {
        this.clock.clearTimeout(id);
      }
    }
    return mine.length;
  }

  /** True time, in ms since the epoch: the host's clock less any jump it made. */
  get now(): number {
    return this.clock.now - this.hostOffsetMs;
  }

  /** Sets the host's clock `deltaMs` away from where it is; timers and performance.now() stay as they are. */
  jumpHostClock(deltaMs: number): void {
    this.clock.setSystemTime(this.clock.now + deltaMs);
    this.hostOffsetMs += deltaMs;
  }

  /** Timers pending on the simulated clock (the plugin's, the simulator's, the relay's), this class's own left out. */
  pendingTimers(): number {
    return this.clock.countTimers() - this.ownTimers;
  }

  /**
   * Fires every timer due until true time `untilMs`, one at a time, letting real work finish after each;
   * returns sooner when wakeAt asks for an earlier moment meanwhile.
   */
  async runUntil(untilMs: number): Promise<void> {
    let reached = false;
    const markers: unknown[] = [];
    const stopAt = (atMs: number): void => {
      this.ownTimers += 1;
      const marker = this.clock.setTimeout(
        () => {
          reached = true;
          this.ownTimers -= 1;
          markers.splice(markers.indexOf(marker), 1);
        },
        Math.max(0, atMs - this.now),
      );
      markers.push(marker);
    };
    stopAt(untilMs);
    this.wake = (atMs) => atMs < untilMs && stopAt(atMs);
    let steps = 0;
    let lastNow = this.clock.now;
    try {
      while (!reached) {
        this.step();
        steps = this.clock.now === lastNow ? steps + 1 : 0;
        lastNow = this.clock.now;
        if (steps > MAX_STEPS_AT_ONE_MOMENT) {
          throw new Error(`${MAX_STEPS_AT_ONE_MOMENT} timers fired at one simulated moment: a timer reschedules itself at once`);
        }
        await this.settle();
      }
    } finally {
      this.wake = undefined;
      for (const marker of markers) {
        this.clock.clearTimeout(marker as number);
        this.ownTimers -= 1;
      }
    }
  }

  /** Something is planned for true time `atMs`, while time may be running: the run stops there, so it is not overrun. */
  wakeAt(atMs: number): void {
    this.wake?.(atMs);
  }

  /** Resolves once no real work has been under way for a few turns of the event loop. */
  async settle(): Promise<void> {
    const deadline = realMs() + SETTLE_LIMIT_MS;
    for (let quiet = 0; quiet < QUIET_TURNS; ) {
      const before = callbacks;
      await turn();
      const busy = callbacks - before > this.ownCallbacksPerTurn || requestsInFlight() > 0;
      quiet = busy ? 0 : quiet + 1;
      if (realMs() > deadline) {
        this.slowSettles += 1;
        return;
      }
    }
  }

  /** Puts the real timers back. */
  uninstall(): void {
    activity.disable();
    this.clock.uninstall();
    syncBuiltinESMExports();
  }

  private clockTimers(): ClockTimer[] {
    const { timers } = this.clock as unknown as { timers?: Map<number, ClockTimer> };
    return timers === undefined ? [] : [...timers.values()];
  }

  private step(): void {
    try {
      this.clock.next();
    } catch (error) {
      this.timerErrors.push(error);
    }
  }

  /** The fewest callbacks an idle turn counts: the turn's own immediate and the promise it resolves. */
  private async calibrate(): Promise<void> {
    let fewest = Infinity;
    for (let sample = 0; sample < 20; sample += 1) {
      const before = callbacks;
      await turn();
      fewest = Math.min(fewest, callbacks - before);
    }
    this.ownCallbacksPerTurn = fewest;
  }
}
