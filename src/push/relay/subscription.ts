import { setTimeout as sleep } from 'node:timers/promises';
import { honoursRetryAfter, parseRetryAfter } from '../../cloud/retry-policy.js';
import type { RelaySettings } from '../../config/push-settings.js';
import { errorCode, errorMessage, type Logger } from '../../log.js';
import { type Backoff, BackoffDelays, honouringRetryAfter } from '../../values/backoff.js';
import { describeDuration } from '../../values/time.js';
import { type CatchUpPoint, RelayMessages } from './messages.js';
import { answerUnlessAborted, isRelayEvent, LineSplitter, parseRelayLine, readUntilAborted, requestRelayStream } from './stream.js';

/**
 * The relay subscription: the loop that keeps one stream open, with its timing, its waits between
 * reconnects, the rule for a page that answers in the relay's place, and when a stream down counts as
 * an outage.
 */

/** The relay subscription's clock: how long silence, a break or a refusal lasts before what. */
export interface RelayTiming {
  /** A stream that delivers nothing at all (not even a keepalive) for this long is dropped and reopened. */
  aliveMs: number;
  /** The waits between reconnects; the jitter keeps homes from reconnecting together after the relay restarts. */
  reconnect: Backoff;
  /** A stream that lived this long starts the backoff over. */
  stableMs: number;
  /** After the relay refused access (401, 403): the token will not fix itself soon. */
  refusedRetryMs: number;
  /** The longest Retry-After (on 429, 503) waited out; a longer one is cut to this. */
  maxRetryAfterMs: number;
  /** Down for longer than this, the doorbells show a fault. */
  faultAfterMs: number;
  /** A message older than this is a stale alert, dropped. */
  staleMs: number;
}

export const RELAY_TIMING: Readonly<RelayTiming> = Object.freeze({
  aliveMs: 100_000,
  // Steps of 2, 4 ... 32 s, then 60, of which the jitter waits the upper half: the first reconnect
  // comes after 1 to 2 s, the latest 30 to 60 s apart.
  reconnect: Object.freeze({ firstMs: 2_000, factor: 2, maxMs: 60_000, jitter: true }),
  stableMs: 60_000,
  refusedRetryMs: 10 * 60_000,
  maxRetryAfterMs: 10 * 60_000,
  faultAfterMs: 60_000,
  staleMs: 120_000,
});

/** How one relay connection ended, as far as the wait before the next one is concerned. */
export type ConnectionEnd =
  | { kind: 'ended'; livedMs: number }
  | { kind: 'refused'; status: number; retryAfterMs: number | undefined }
  | { kind: 'failed' };

/**
 * The wait before reconnecting to the relay: the `reconnect` backoff, started over after a stream that
 * lived `stableMs`. A refused token waits `refusedRetryMs`. A Retry-After (429, 503) is honoured as
 * every retry honours it (the larger of it and the backoff), cut to `maxRetryAfterMs`.
 */
export class ReconnectDelays {
  private readonly backoff: BackoffDelays;

  constructor(
    private readonly timing: RelayTiming,
    random: () => number = Math.random,
  ) {
    this.backoff = new BackoffDelays(timing.reconnect, random);
  }

  after(end: ConnectionEnd): number {
    if (end.kind === 'refused' && isAccessRefusal(end.status)) {
      return this.timing.refusedRetryMs;
    }
    if (end.kind === 'ended' && end.livedMs >= this.timing.stableMs) {
      this.backoff.reset();
    }
    const backoffMs = this.backoff.next();
    if (end.kind === 'refused' && end.retryAfterMs !== undefined) {
      return honouringRetryAfter(backoffMs, Math.min(end.retryAfterMs, this.timing.maxRetryAfterMs));
    }
    return backoffMs;
  }
}

/** 401 and 403: the relay refuses this token (or its absence), which waiting briefly will not change. */
export function isAccessRefusal(status: number): boolean {
  return status === 401 || status === 403;
}

/**
 * The calls waiting for the relay stream to open, each with its own timeout: all end at once when it
 * opens or the subscription stops, and one that timed out is forgotten with its timer, however many
 * pile up while the relay refuses.
 */
export class ConnectWaits {
  /** Each ends one pending wait, and removes itself. */
  private readonly waits = new Set<() => void>();

  /** Resolves with `outcome()` once ended by endAll, or after `timeoutMs`. */
  wait(timeoutMs: number, outcome: () => boolean): Promise<boolean> {
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.waits.delete(end);
        resolve(outcome());
      };
      const timer = setTimeout(end, timeoutMs);
      this.waits.add(end);
    });
  }

  endAll(): void {
    [...this.waits].forEach((end) => end());
  }
}

/** Why a connection to an address that is not an ntfy relay ended, for the debug log and the outage warning. */
export const NOT_A_RELAY = 'answered, but not as an ntfy relay';

/**
 * A server that answers the relay's address with `200` but is no ntfy relay: a captive portal, a
 * proxy's error page, a web site at a mistyped `push.relayUrl`. Counting its bytes as a live stream
 * would show the relay connected and register an address where every alert is lost in silence, so
 * only a well-formed ntfy event proves a stream, and such an answer is said once in the log, in words
 * that name the setting to check. Shared by the subscriptions of one run: said again only after a real
 * relay answered in between, not at each reconnect, nor after a sign-out and a sign-in.
 */
export class ImpostorWarning {
  private warned = false;

  constructor(
    /** Named in the warning; not a secret. */
    private readonly relayUrl: string,
    private readonly log: Logger,
  ) {}

  /** The address answered something that is not an ntfy stream. */
  notARelay(): void {
    if (!this.warned) {
      this.warned = true;
      this.log.warn(
        `push.relayUrl ${this.relayUrl} ${NOT_A_RELAY} (a web page, a captive portal or a proxy's error page?): ` +
          'motion alerts cannot arrive through it. Check push.relayUrl; still trying.',
      );
    }
  }

  /** A real relay answered: the next impostor is news again. */
  relayAnswered(): void {
    this.warned = false;
  }
}

/** Why relay alerts cannot arrive. */
export interface DeliveryOutage {
  /** Since when the stream is down, on this machine's clock. */
  since: number;
  /** The relay's last answer refused access (401, 403): a token to fix, not a network to wait for. */
  refused: boolean;
  /**
   * How long before this report the fault is dated: `faultAfterMs` after the stream went down, which
   * for a stream found silent only by the alive timeout was before it was noticed; 0 when on time.
   */
  faultedForMs: number;
}

export interface RelayOutageOptions {
  /** Down for longer than this, alerts count as unable to arrive. */
  faultAfterMs: number;
  log: Logger;
  /** A monotonic clock (performance.now): a wall clock set back while down would put the fault off by as much. */
  now: () => number;
  /** Down too long (true, with how long it has been down, in ms), or back after that (false). */
  onDeliveryDown: (down: boolean, downForMs?: number) => void;
}

/**
 * Whether relay alerts can arrive: a stream down for longer than `faultAfterMs` gets one warning and
 * the doorbells' fault, and its return clears the fault. A short break, or the quiet between
 * keepalives, is no outage. It owns one timer, cleared by `up` and `stop`.
 */
export class RelayOutage {
  private timer: NodeJS.Timeout | undefined;
  private reported = false;
  private stopped = false;

  constructor(private readonly options: RelayOutageOptions) {}

  /**
   * The stream is down, since `downForMs` ago; `problem()` says why, for the warning (the reason may
   * change while it stays down).
   */
  down(problem: () => string, downForMs = 0): void {
    if (this.stopped) {
      return;
    }
    const { faultAfterMs, log, now, onDeliveryDown } = this.options;
    clearTimeout(this.timer);
    const downSince = now() - downForMs;
    this.timer = setTimeout(() => {
      this.reported = true;
      const seconds = Math.round((now() - downSince) / 1000);
      log.warn(`Push relay unreachable for ${seconds} s (${problem()}): motion alerts cannot arrive until it is back. Still trying.`);
      onDeliveryDown(true, now() - downSince);
    }, Math.max(0, faultAfterMs - downForMs));
  }

  up(): void {
    clearTimeout(this.timer);
    if (this.reported) {
      this.reported = false;
      this.options.onDeliveryDown(false);
    }
  }

  /** Nothing is reported any more. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

export interface RelaySubscriptionOptions {
  /** The relay; its token is sent as `Authorization: Bearer <token>`, and is a secret. */
  relay: RelaySettings;
  /** A secret: never logged. */
  topic: string;
  log: Logger;
  timing: RelayTiming;
  /** The body of each fresh message, in order, with the relay's `time` of it (unix seconds). */
  onMessage: (body: Buffer, relayTime: number) => void;
  /** Told of each message dropped as stale, with how long after it was sent it arrived; must return at once. */
  onStale?: (ageMs: number) => void;
  /** The stream has been down longer than `faultAfterMs` (true, and why), or is back after that (false). */
  onDeliveryDown: (down: boolean, outage?: DeliveryOutage) => void;
  /** The stream is open, each time it opens. */
  onConnected?: () => void;
  /** This machine's wall clock (Date.now when absent), held against the relay's `time` stamps only. */
  now?: () => number;
  /** A monotonic clock (performance.now when absent), for every duration: a wall clock can step. */
  monotonicNow?: () => number;
  /** 0 to 1, for the jitter. */
  random?: () => number;
  /** Shared by the run's subscriptions, so an address that is not a relay is said once a run; one of its own when absent. */
  impostor?: ImpostorWarning;
  /** Where a stream picks up: the endpoint's, which outlives its subscriptions; one of its own when absent. */
  catchUp?: CatchUpPoint;
}

/** How one connection ended, and why in words for the log. */
type Outcome = ConnectionEnd & { reason: string };

/**
 * One outgoing subscription to the relay (ntfy's subscribe API: `GET <relay>/<topic>/json`), kept open
 * until stop: reopened after a break with `since=` so that nothing published meanwhile is lost,
 * dropped and reopened when it falls silent, with backoff between attempts.
 */
export class RelaySubscription {
  private readonly stopping = new AbortController();
  private readonly monotonicNow: () => number;
  private readonly impostor: ImpostorWarning;
  private readonly delays: ReconnectDelays;
  private running: Promise<void> | undefined;
  private connected = false;
  private readonly waits = new ConnectWaits();
  private readonly messages: RelayMessages;
  private readonly outage: RelayOutage;
  private lastProblem = 'not connected yet';
  /** The relay's last answer refused access: the Doorbell Alerts sensor says so rather than "unreachable". */
  private accessRefused = false;
  /** On the monotonic clock: how long the stream has been down is a duration, whatever the wall clock says. */
  private lastAliveAt: number | undefined;

  constructor(private readonly options: RelaySubscriptionOptions) {
    const { timing, log, onDeliveryDown, random, relay: { relayUrl } } = options;
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.impostor = options.impostor ?? new ImpostorWarning(relayUrl, log);
    this.delays = new ReconnectDelays(timing, random);
    const wallNow = options.now ?? Date.now;
    // The outage is timed on the monotonic clock; the sensor's words name the wall time it began.
    this.outage = new RelayOutage({
      faultAfterMs: timing.faultAfterMs,
      log,
      now: this.monotonicNow,
      onDeliveryDown: (down, downForMs = 0) =>
        onDeliveryDown(down, down ? { since: wallNow() - downForMs, refused: this.accessRefused, faultedForMs: Math.max(0, downForMs - timing.faultAfterMs) } : undefined),
    });
    this.messages = new RelayMessages({ relayUrl, log, staleMs: timing.staleMs, now: wallNow, onMessage: options.onMessage, onStale: options.onStale, catchUp: options.catchUp });
  }

  start(): void {
    if (this.running === undefined) {
      this.outage.down(() => this.lastProblem);
      this.running = this.run();
    }
  }

  /** Resolves true once the stream is open, false when `timeoutMs` passes first or it is stopped. */
  whenConnected(timeoutMs: number): Promise<boolean> {
    // Once stopped, nothing will connect: waiting out the timeout would only keep a timer alive.
    if (this.connected || this.stopping.signal.aborted) {
      return Promise.resolve(this.connected && !this.stopping.signal.aborted);
    }
    return this.waits.wait(timeoutMs, () => this.connected && !this.stopping.signal.aborted);
  }

  /** Closes the stream and clears every timer; resolves once nothing runs any more. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.outage.stop();
    this.waits.endAll();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const outcome = await this.connectOnce();
      if (this.stopping.signal.aborted) {
        return;
      }
      await sleep(this.delayAfter(outcome), undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
  }

  private async connectOnce(): Promise<Outcome> {
    // One controller per attempt, aborted by the watchdog or by stop(): a combined AbortSignal.any
    // could lose the abort of a source that is garbage-collected first (docs/architecture.md).
    const attempt = new AbortController();
    const abortOnStop = () => attempt.abort();
    this.stopping.signal.addEventListener('abort', abortOnStop, { once: true });
    let fellSilent = false;
    // Armed before the request: a relay that never answers is as dead as one that falls silent. Only
    // an ntfy event puts it off: a server that trickles anything else is as good as silent.
    const watchdog = setTimeout(() => {
      fellSilent = true;
      attempt.abort();
    }, this.options.timing.aliveMs);
    // What the answer has shown: an ntfy event (`proven`), any bytes at all, or itself to be no relay.
    const stream = { proven: false, bytes: false, notARelay: false };
    let openedAt = 0;
    try {
      // After a break, `since` asks for what was published meanwhile (see CatchUpPoint).
      const { relay, topic } = this.options;
      const request = requestRelayStream({ relayUrl: relay.relayUrl, topic, token: relay.relayToken, since: this.messages.since() }, attempt.signal);
      const response = await answerUnlessAborted(request, attempt.signal, (late) => late.body.destroy());
      if (response.status !== 200) {
        response.body.destroy();
        const retryAfter = honoursRetryAfter(response.status) ? parseRetryAfter(response.retryAfter) : undefined;
        return { kind: 'refused', status: response.status, retryAfterMs: retryAfter, reason: `HTTP ${response.status}` };
      }
      openedAt = this.monotonicNow();
      this.messages.newStream();
      const splitter = new LineSplitter();
      await readUntilAborted(response.body, attempt.signal, (chunk) => {
        stream.bytes ||= chunk.length > 0;
        for (const line of splitter.push(chunk)) {
          const parsed = parseRelayLine(line);
          if (isRelayEvent(parsed)) {
            watchdog.refresh();
            this.lastAliveAt = this.monotonicNow();
            stream.proven = true;
            this.markConnected();
          } else if (!stream.proven) {
            // An ntfy relay's first line is its `open` event: whatever else comes first is no relay's.
            stream.notARelay = true;
            attempt.abort();
            return;
          }
          this.messages.handle(parsed);
        }
      });
      // An answer that ended without an event, even an empty one, was no relay's: ntfy's stream always
      // begins with its `open` event.
      stream.notARelay ||= !stream.proven;
      return this.endOf(stream, 'the relay ended the stream', openedAt);
    } catch (error) {
      // Bytes for the whole alive timeout and not one event: a server trickling something else.
      stream.notARelay ||= fellSilent && stream.bytes;
      // The system's code (ECONNREFUSED, ECONNRESET) says it in a word; else the error's message.
      const reason = fellSilent ? `nothing arrived for ${Math.round(this.options.timing.aliveMs / 1000)} s` : (errorCode(error) ?? errorMessage(error));
      return this.endOf(stream, reason, openedAt);
    } finally {
      clearTimeout(watchdog);
      this.stopping.signal.removeEventListener('abort', abortOnStop);
      this.markDisconnected(fellSilent);
    }
  }

  /**
   * How a connection ended. Only one that showed an ntfy event was a stream: one that answered 200 and
   * then anything else is no relay (said once), and counts as a failed attempt, as one that never
   * answered does, so the backoff goes on growing and the outage runs on.
   */
  private endOf(stream: { proven: boolean; notARelay: boolean }, reason: string, openedAt: number): Outcome {
    if (stream.proven) {
      return { kind: 'ended', livedMs: this.monotonicNow() - openedAt, reason };
    }
    if (stream.notARelay && !this.stopping.signal.aborted) {
      this.impostor.notARelay();
      return { kind: 'failed', reason: NOT_A_RELAY };
    }
    return { kind: 'failed', reason };
  }

  private delayAfter(outcome: Outcome): number {
    const { timing, log } = this.options;
    const delayMs = this.delays.after(outcome);
    this.accessRefused = outcome.kind === 'refused' && isAccessRefusal(outcome.status);
    if (outcome.kind === 'refused' && this.accessRefused) {
      this.lastProblem = `access refused (HTTP ${outcome.status})`;
      log.warn(`Push relay refused access (HTTP ${outcome.status}): check push.relayToken. Trying again in ${describeDuration(timing.refusedRetryMs)}.`);
    } else {
      this.lastProblem = outcome.reason;
      log.debug(`Push relay: ${outcome.reason}; reconnecting in ${delayMs} ms`);
    }
    return delayMs;
  }

  private markConnected(): void {
    if (this.connected) {
      return;
    }
    this.connected = true;
    this.impostor.relayAnswered();
    this.options.log.info(`push relay connected: ${this.options.relay.relayUrl}`);
    this.outage.up();
    this.waits.endAll();
    this.options.onConnected?.();
  }

  /**
   * A stream that fell silent has been down since it last showed life, which was up to `aliveMs`
   * ago; one that ended or failed went down just now (the quiet between keepalives is no outage).
   */
  private markDisconnected(fellSilent: boolean): void {
    if (!this.connected) {
      return;
    }
    this.connected = false;
    this.messages.broke();
    const downForMs = fellSilent && this.lastAliveAt !== undefined ? this.monotonicNow() - this.lastAliveAt : 0;
    this.outage.down(() => this.lastProblem, downForMs);
  }
}
