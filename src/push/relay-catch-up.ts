/**
 * Seconds asked for before the newest relay time seen. Both times are the relay's own, so no clock
 * difference needs covering; but ntfy stamps a message when it takes it and writes it to the streams
 * afterwards, each on a task of its own, so a message stamped just before the last line seen (a
 * keepalive) may still have been on its way when the stream broke. What comes back twice is dropped
 * by message id.
 */
export const CATCH_UP_SLACK_S = 2;

/**
 * Where a reopened relay stream picks up, so that nothing published during a break is lost: after
 * the last message handled, or, while none was, at the break, by the relay's clock: the newest relay
 * time the broken stream showed (any line: a keepalive, a message). The host clock is never asked: a
 * host minutes fast would skip what was published meanwhile, one minutes slow would ask for what has
 * gone stale. The break is thus when the stream last showed life, not when it was noticed: a half-open
 * stream is only noticed once it has been silent for the whole alive timeout, and a message published
 * in between must still come back.
 */
export class CatchUpPoint {
  private lastMessageId: string | undefined;
  /** The earliest break not known to be caught up on, in the relay's unix seconds. */
  private brokeAt: number | undefined;

  /** From now on, the catch-up starts after this message. */
  handled(id: string): void {
    this.lastMessageId = id;
    this.brokeAt = undefined;
  }

  /**
   * A stream that had opened ended; `relayTime` is the newest time it showed, undefined when it
   * stamped no line (then only an earlier break can be caught up on). An earlier break is kept: a
   * stream that breaks again during its catch-up may not have delivered what was published during
   * the first one.
   */
  broke(relayTime: number | undefined): void {
    this.brokeAt ??= relayTime;
  }

  /**
   * The `since` parameter of the next stream: a message id, or unix seconds, which the relay counts
   * inclusively; undefined (only new messages) before any break.
   */
  since(): string | undefined {
    if (this.lastMessageId !== undefined) {
      return this.lastMessageId;
    }
    return this.brokeAt === undefined ? undefined : String(Math.floor(this.brokeAt) - CATCH_UP_SLACK_S);
  }
}
