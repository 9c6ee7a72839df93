import { setTimeout as sleep } from 'node:timers/promises';
import type { RelaySettings } from '../config/push-settings.js';
import { honoursRetryAfter, parseRetryAfter } from '../cloud/retry-policy.js';
import { errorCode, errorMessage, type Logger } from '../log.js';
import { isAccessRefusal, ReconnectDelays, type ConnectionEnd } from './relay-backoff.js';
import { answerUnlessAborted, readUntilAborted } from './abortable-stream.js';
import { ConnectWaits } from './connect-waits.js';
import type { CatchUpPoint } from './relay-catch-up.js';
import { ImpostorWarning, NOT_A_RELAY } from './relay-impostor.js';
import { isRelayEvent, LineSplitter, parseRelayLine } from './relay-lines.js';
import { RelayMessages } from './relay-messages.js';
import { RelayOutage, type DeliveryOutage } from './relay-outage.js';
import { requestRelayStream } from './relay-stream.js';
import type { RelayTiming } from './relay-timing.js';
import { describeDuration } from '../values/time.js';

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
