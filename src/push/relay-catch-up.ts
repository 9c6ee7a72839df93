/**
 * Seconds asked for before a break, on top of it: the relay stamps messages with its own clock, which
 * may run a little behind this machine's. What this brings back twice is dropped by message id.
 */
export const CLOCK_SLACK_S = 5;

/**
 * Where a reopened relay stream picks up, so that nothing published during a break is lost: after
 * the last message handled, or, while none was, at the break. The break is taken to be when the
 * stream last showed life (any chunk: a line, a keepalive), not when it was noticed: a half-open
 * stream is only noticed once it has been silent for the whole alive timeout, and a message
 * published in between must still come back.
 */
export class CatchUpPoint {
  private lastMessageId: string | undefined;
  private aliveAt: number | undefined;
  /** The earliest break not known to be caught up on. */
  private brokeAt: number | undefined;

  /** When the stream last showed life; undefined before any stream delivered anything. */
  get lastAliveAt(): number | undefined {
    return this.aliveAt;
  }

  alive(now: number): void {
    this.aliveAt = now;
  }

  /** From now on, the catch-up starts after this message. */
  handled(id: string): void {
    this.lastMessageId = id;
    this.brokeAt = undefined;
  }

  /**
   * A stream that had opened ended. An earlier break is kept: a stream that breaks again during its
   * catch-up may not have delivered what was published during the first one.
   */
  broke(): void {
    this.brokeAt ??= this.aliveAt;
  }

  /**
   * The `since` parameter of the next stream: a message id, or unix seconds, which the relay counts
   * inclusively; undefined (only new messages) before any break.
   */
  since(): string | undefined {
    if (this.lastMessageId !== undefined) {
      return this.lastMessageId;
    }
    return this.brokeAt === undefined ? undefined : String(Math.floor(this.brokeAt / 1000) - CLOCK_SLACK_S);
  }
}
