import { errorMessage, type Logger } from '../../log.js';
import type { RelayMark, RelayMarkStore } from '../../session/relay-mark.js';
import { describeDuration } from '../../values/time.js';
import type { RelayLine } from './stream.js';

/**
 * The relay's messages as the stream delivers them: the ids already seen, the relay's clock that says
 * which are stale, and where a catch-up after a break starts.
 */

/** The latest `limit` ids seen, the oldest forgotten first: a set that cannot grow without end. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    for (const oldest of this.ids) {
      if (this.ids.size <= this.limit) {
        return;
      }
      this.ids.delete(oldest);
    }
  }
}

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

/**
 * Seconds asked for before a relay time, when no message was handled yet. Both times are the relay's
 * own, so no difference between clocks needs covering; but ntfy stamps a message when it takes it and
 * writes it to the streams afterwards, each on a task of its own, so a message stamped just before the
 * last line seen may still have been on its way when the stream broke; and a relay restarted on
 * another host may answer with a clock somewhat behind the old one (less than the minute after which
 * its clock counts as stepped back). What comes back twice is dropped by message id.
 */
export const CATCH_UP_SLACK_S = 60;

/** How often relay.json is written at most: a burst of rings makes one write a second, not one each. */
export const MARK_WRITE_INTERVAL_MS = 1_000;

/**
 * Where a reopened relay stream picks up, so that nothing published during a break is lost: after
 * the last message handled, or, while none was, at the break, by the relay's clock: the newest relay
 * time the broken stream showed (any line: a keepalive, a message). The host clock is never asked: a
 * host minutes fast would skip what was published meanwhile, one minutes slow would ask for what has
 * gone stale. The break is thus when the stream last showed life, not when it was noticed: a half-open
 * stream is only noticed once it has been silent for the whole alive timeout, and a message published
 * in between must still come back.
 *
 * It outlives the streams (a sign-out and a new sign-in reopen one), and with the mark kept in
 * relay.json, a restart too.
 */
export class CatchUpPoint {
  /** The ids handled lately: a catch-up brings again what the broken stream may already have delivered. */
  readonly seenIds = new RecentIds(1_000);
  private lastMessageId: string | undefined;
  /** The earliest relay time not known to be caught up on (a break, or a stream that showed its time before any message), in unix seconds. */
  private brokeAt: number | undefined;

  /** Told each time the mark may have changed. */
  constructor(private readonly onChange: () => void = () => undefined) {}

  /** From now on, the catch-up starts after this message. */
  handled(id: string): void {
    this.lastMessageId = id;
    this.brokeAt = undefined;
    this.onChange();
  }

  /**
   * A stream that had opened ended; `relayTime` is the newest time it showed, undefined when it
   * stamped no line (then only an earlier break can be caught up on). An earlier break is kept: a
   * stream that breaks again during its catch-up may not have delivered what was published during
   * the first one.
   */
  broke(relayTime: number | undefined): void {
    this.brokeAt ??= relayTime;
    this.onChange();
  }

  /**
   * A stream showed the relay's time (its `open` or a keepalive). Until a message is handled, the
   * catch-up starts from the first such time: a run that ends without a word (a crash, a power cut)
   * has then kept a mark as well, and the next run asks for what came since, none of which it
   * handled (each message handled replaces the mark).
   */
  alive(relayTime: number): void {
    if (this.lastMessageId === undefined && this.brokeAt === undefined) {
      this.brokeAt = relayTime;
      this.onChange();
    }
  }

  /**
   * The mark of an earlier run, read once this run's streams may already have moved on: a message
   * handled in this run is newer than it; else the earlier run's message, or the earlier of the two
   * breaks, is where the catch-up starts.
   */
  resume(mark: RelayMark): void {
    if (this.lastMessageId !== undefined) {
      return;
    }
    if ('lastMessageId' in mark) {
      this.lastMessageId = mark.lastMessageId;
      this.brokeAt = undefined;
    } else {
      this.brokeAt = Math.min(this.brokeAt ?? Infinity, mark.relayTime);
    }
  }

  /** What relay.json keeps; undefined while there is nothing to catch up from. */
  mark(): RelayMark | undefined {
    if (this.lastMessageId !== undefined) {
      return { lastMessageId: this.lastMessageId };
    }
    return this.brokeAt === undefined ? undefined : { relayTime: this.brokeAt };
  }

  /**
   * The `since` parameter of the next stream: a message id, or unix seconds, which the relay counts
   * inclusively; undefined (only new messages) when there is nothing to catch up from.
   */
  since(): string | undefined {
    if (this.lastMessageId !== undefined) {
      return this.lastMessageId;
    }
    return this.brokeAt === undefined ? undefined : String(Math.floor(this.brokeAt) - CATCH_UP_SLACK_S);
  }
}

type MarkStore = Pick<RelayMarkStore, 'read' | 'write'>;

/**
 * The catch-up point of one endpoint, and relay.json, which keeps its mark across restarts: read
 * before the first stream, written when the mark changed (at most once a second) and at close. A
 * message is handed on before anything is written: a change only plans a write on a timer. One timer,
 * one write at a time, and nothing left running once closed.
 */
export class KeptCatchUpPoint {
  readonly point = new CatchUpPoint(() => this.changed());
  /** The relay and topic of the streams, known once the first one starts. */
  private owner: { relayUrl: string; topic: string } | undefined;
  /** Only a read that succeeded counts: one that failed (too many open files, say) is tried again. */
  private markRead = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private lastWriteAt = -Infinity;
  /** The mark in relay.json, as JSON: an unchanged mark is not written again. */
  private kept: string | undefined;
  private changedMeanwhile = false;
  private failing = false;
  private closed = false;

  constructor(
    /** Without one, the point lives only as long as the endpoint. */
    private readonly store: MarkStore | undefined,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Before a stream starts: takes up the mark an earlier run kept for this relay and topic. A file that
   * cannot be read keeps no stream from opening: that one only asks for less, and the next tries again.
   */
  async resume(relayUrl: string, topic: string): Promise<void> {
    this.owner = { relayUrl, topic };
    if (this.markRead || this.store === undefined) {
      return;
    }
    try {
      const mark = await this.store.read(relayUrl, topic);
      this.markRead = true;
      if (mark !== undefined) {
        this.kept = JSON.stringify(mark);
        this.point.resume(mark);
      }
    } catch (error) {
      this.log.warn(`${errorMessage(error)} The push relay stream opens without asking for what the relay received before it.`);
    }
  }

  /** Clears the timer, waits for a write under way, and writes the mark if it changed since; nothing is written after. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    await this.write();
  }

  private changed(): void {
    if (this.closed || this.store === undefined) {
      return;
    }
    if (this.writing !== undefined) {
      this.changedMeanwhile = true;
      return;
    }
    if (this.timer !== undefined) {
      return;
    }
    const waitMs = Math.max(0, Math.ceil(this.lastWriteAt + MARK_WRITE_INTERVAL_MS - this.now()));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.write().finally(() => this.afterWrite());
    }, waitMs);
    // Homebridge's own servers keep the process alive; a planned write must not hold it open on exit.
    this.timer.unref();
  }

  private afterWrite(): void {
    this.writing = undefined;
    if (this.changedMeanwhile) {
      this.changedMeanwhile = false;
      this.changed();
    }
  }

  /** Never rejects: a mark that cannot be written costs only the catch-up after a restart. */
  private async write(): Promise<void> {
    const mark = this.point.mark();
    const text = mark === undefined ? undefined : JSON.stringify(mark);
    if (mark === undefined || text === this.kept || this.owner === undefined || this.store === undefined) {
      return;
    }
    this.lastWriteAt = this.now();
    try {
      await this.store.write(this.owner.relayUrl, this.owner.topic, mark);
      this.kept = text;
      this.failing = false;
    } catch (error) {
      // Said once, not at every ring.
      if (!this.failing) {
        this.log.warn(`Could not save where the push relay stream picks up after a restart: ${errorMessage(error)}`);
      }
      this.failing = true;
    }
  }
}

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
