/** A difference between this machine's clock and the relay's beyond this is worth a warning. */
export const CLOCK_OFFSET_WARNING_MS = 60_000;

/**
 * The relay's clock, as one stream shows it: the newest `time` of any event on the stream (`open`,
 * `keepalive`, `message`). A message's age is judged against it rather than against this machine's
 * clock: both times are then the relay's own, so a host clock minutes fast or slow never makes a
 * fresh alert look stale. Each stream starts without a clock, so a relay whose clock was set back
 * while it restarted cannot make every later message look old.
 */
export class RelayClock {
  /** Unix seconds; undefined until the current stream has stamped a line. */
  private newestTime: number | undefined;
  private warned = false;

  constructor(
    private readonly hostNow: () => number,
    /** Named in the warning; not a secret. */
    private readonly relayUrl: string,
    /** Told once, the first time the two clocks differ by more than CLOCK_OFFSET_WARNING_MS. */
    private readonly warn: (message: string) => void,
  ) {}

  /** The newest relay time of the current stream, in unix seconds. */
  get newest(): number | undefined {
    return this.newestTime;
  }

  /** A new stream: only its own lines set the clock. */
  newStream(): void {
    this.newestTime = undefined;
  }

  /**
   * An `open` or `keepalive` line: the relay stamps it as it writes it, so, unlike a message sent
   * from its cache, it also tells how far this machine's clock is from the relay's.
   */
  alive(time: number): void {
    this.advance(time);
    const offsetMs = this.hostNow() - time * 1000;
    if (!this.warned && Math.abs(offsetMs) > CLOCK_OFFSET_WARNING_MS) {
      this.warned = true;
      this.warn(
        `This machine's clock is ${describeOffset(offsetMs)} the push relay's (${this.relayUrl}): alerts are timed by the relay's clock, so none is lost, ` +
          'but the system clock should be set right (NTP).',
      );
    }
  }

  /** How old a message stamped `time` is by the relay's clock, in ms; it may move the clock on. */
  ageOf(time: number): number {
    this.advance(time);
    return ((this.newestTime ?? time) - time) * 1000;
  }

  private advance(time: number): void {
    this.newestTime = this.newestTime === undefined ? time : Math.max(this.newestTime, time);
  }
}

/** "5 minutes ahead of", "75 s behind": how a host clock stands to the relay's, for the log. */
function describeOffset(offsetMs: number): string {
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  const amount = seconds >= 120 ? `${Math.round(seconds / 60)} minutes` : `${seconds} s`;
  return `${amount} ${offsetMs > 0 ? 'ahead of' : 'behind'}`;
}
