/** Only these topics can have a subscriber that UnifiedPush publishes are charged to, as on ntfy. */
const UNIFIED_PUSH_TOPIC = /^up.{12}$/;

/** ntfy forgets a visitor it has not seen for a day, and with it the topics it subscribed to. */
const VISITOR_EXPIRY_MS = 24 * 60 * 60 * 1000;

/**
 * ntfy's subscriber-based rate limiting (https://docs.ntfy.sh/config/#subscriber-based-rate-limiting):
 * a subscription (a stream or a poll) to a UnifiedPush topic makes its subscriber the topic's "rate
 * visitor", and only then does the topic take UnifiedPush publishes. The subscriber stays for a day after
 * it was last seen, so a publish during a short break of the stream still succeeds and is cached.
 */
export class RateVisitors {
  private readonly lastSeen = new Map<string, number>();

  constructor(
    private readonly nowMs: () => number,
    /** Open streams of the topic right now: an open stream keeps its subscriber seen. */
    private readonly openStreams: (topic: string) => number,
  ) {}

  /** A subscription to `topics` was accepted, or one ended. */
  seen(topics: Iterable<string>): void {
    for (const topic of topics) {
      if (UNIFIED_PUSH_TOPIC.test(topic)) {
        this.lastSeen.set(topic, this.nowMs());
      }
    }
  }

  has(topic: string): boolean {
    if (!UNIFIED_PUSH_TOPIC.test(topic)) {
      return false;
    }
    const seenAt = this.lastSeen.get(topic);
    return this.openStreams(topic) > 0 || (seenAt !== undefined && this.nowMs() - seenAt < VISITOR_EXPIRY_MS);
  }
}
