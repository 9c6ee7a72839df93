import { describeDuration } from '../values/time.js';

/** A difference between this machine's clock and the relay's beyond this is worth a warning. */
const CLOCK_OFFSET_WARNING_MS = 60_000;

/** An `open` or `keepalive` stamped this much before the newest time seen: the relay's clock went back. */
const CLOCK_STEP_BACK_MS = 60_000;

/**
 * The relay's clock, as one stream shows it: the newest `time` of any event on the stream (`open`,
 * `keepalive`, `message`). Each stream starts without a clock, so a relay restarted with its clock
 * set back cannot make every later message look old.
 *
 * A message is stale only when it is old by both clocks, the relay's and this machine's: a host clock
 * minutes fast or slow never makes a fresh alert look stale (the relay's clock says it is fresh), nor
 * does one line the relay stamped far ahead (this machine's clock says it is fresh), while a message
 * replayed long after it was sent is old by both.
 *
 * The relay's clock can also step back (NTP fixing it, a relay moved to another host): an `open` or
 * `keepalive`, stamped as the relay writes it, that is well before the newest time seen restarts the
 * clock from its own time, so that a catch-up after a break asks from the relay's true time, not from
 * a time it once showed by mistake.
 */
export class RelayClock {
  /** Unix seconds; undefined until the current stream has stamped a line. */
  private newestTime: number | undefined;
  private offsetWarned = false;
  /** Per stream: a relay whose clock keeps jumping back and forth is told once for each stream. */
  private stepBackWarned = false;

  constructor(
    /** This machine's wall clock, in ms since the epoch: a relay's `time` is compared with it. */
    private readonly hostNow: () => number,
    /** Named in the warnings; not a secret. */
    private readonly relayUrl: string,
    /** Told once when the two clocks differ by more than CLOCK_OFFSET_WARNING_MS, and when the relay's steps back. */
    private readonly warn: (message: string) => void,
  ) {}

  /** The newest relay time of the current stream, in unix seconds. */
  get newest(): number | undefined {
    return this.newestTime;
  }

  /** A new stream: only its own lines set the clock. */
  newStream(): void {
    this.newestTime = undefined;
    this.stepBackWarned = false;
  }

  /**
   * An `open` or `keepalive` line: the relay stamps it as it writes it, so, unlike a message sent
   * from its cache, it tells the relay's time now, and how far this machine's clock is from it.
   */
  alive(time: number): void {
    const backMs = this.newestTime === undefined ? 0 : (this.newestTime - time) * 1000;
    if (backMs > CLOCK_STEP_BACK_MS) {
      this.newestTime = time;
      this.warnOnce('stepBackWarned', `The push relay's clock (${this.relayUrl}) went back ${describeDuration(backMs)}: alerts are timed from its new time.`);
    } else {
      this.advance(time);
    }
    const offsetMs = this.hostNow() - time * 1000;
    if (Math.abs(offsetMs) > CLOCK_OFFSET_WARNING_MS) {
      this.warnOnce(
        'offsetWarned',
        `This machine's clock is ${describeDuration(offsetMs)} ${offsetMs > 0 ? 'ahead of' : 'behind'} the push relay's (${this.relayUrl}): ` +
          "alerts are timed by the relay's clock, so none is lost, but the system clock should be set right (NTP).",
      );
    }
  }

  /**
   * How old a message stamped `time` is, in ms: the lesser of its age by the relay's clock and by this
   * machine's, so it is stale only when old by both. It may move the relay's clock on.
   */
  ageOf(time: number): number {
    this.advance(time);
    const relayAgeMs = ((this.newestTime ?? time) - time) * 1000;
    return Math.min(relayAgeMs, this.hostNow() - time * 1000);
  }

  private advance(time: number): void {
    this.newestTime = this.newestTime === undefined ? time : Math.max(this.newestTime, time);
  }

  private warnOnce(flag: 'offsetWarned' | 'stepBackWarned', message: string): void {
    if (!this[flag]) {
      this[flag] = true;
      this.warn(message);
    }
  }
}
