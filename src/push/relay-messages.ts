import type { Logger } from '../log.js';
import { CatchUpPoint } from './relay-catch-up.js';
import { RelayClock } from './relay-clock.js';
import type { RelayLine } from './relay-lines.js';
import type { RecentIds } from './recent-ids.js';

export interface RelayMessagesOptions {
  /** Named in the clock warnings; not a secret. */
  relayUrl: string;
  log: Logger;
  /** A message older than this, by the relay's clock and by this machine's, is dropped. */
  staleMs: number;
  /** This machine's wall clock, in ms since the epoch. */
  now: () => number;
  /** The body of each fresh message, in order, with the relay's `time` of it. */
  onMessage: (body: Buffer, relayTime: number) => void;
  /** Told of each message dropped as stale, with its age in ms; must return at once. */
  onStale?: (ageMs: number) => void;
  /** Where the next stream picks up, and the ids handled lately: shared by the endpoint's streams; one of its own when absent. */
  catchUp?: CatchUpPoint;
}

/**
 * What the lines of the relay's streams say, across reconnects: the relay's clock (one per stream),
 * which messages are news (not seen before, not stale), and where a reopened stream picks up.
 */
export class RelayMessages {
  private readonly seenIds: RecentIds;
  private readonly catchUp: CatchUpPoint;
  private readonly clock: RelayClock;

  constructor(private readonly options: RelayMessagesOptions) {
    this.catchUp = options.catchUp ?? new CatchUpPoint();
    this.seenIds = this.catchUp.seenIds;
    this.clock = new RelayClock(options.now, options.relayUrl, (message) => options.log.warn(message));
  }

  /** A stream opened: only its own lines set the relay's clock. */
  newStream(): void {
    this.clock.newStream();
  }

  /** A stream that had opened broke: the next one asks for what was published since. */
  broke(): void {
    this.catchUp.broke(this.clock.newest);
  }

  /** The `since` of the next stream (see CatchUpPoint). */
  since(): string | undefined {
    return this.catchUp.since();
  }

  handle(parsed: RelayLine): void {
    const { log, staleMs, onMessage } = this.options;
    if (parsed.kind === 'bad') {
      log.debug(`Push relay: ignored a line (${parsed.reason})`);
      return;
    }
    if (parsed.kind === 'alive') {
      this.clock.alive(parsed.time);
      this.catchUp.alive(parsed.time);
    }
    if (parsed.kind !== 'message') {
      return;
    }
    const ageMs = this.clock.ageOf(parsed.time);
    if (this.seenIds.has(parsed.id)) {
      return;
    }
    this.seenIds.add(parsed.id);
    this.catchUp.handled(parsed.id);
    // Old by the relay's clock and by this machine's: a catch-up that came too late to be news.
    if (ageMs > staleMs) {
      this.options.onStale?.(ageMs);
      log.debug(`Push relay: dropped a message ${Math.round(ageMs / 1000)} s old`);
      return;
    }
    onMessage(parsed.body, parsed.time);
  }
}
