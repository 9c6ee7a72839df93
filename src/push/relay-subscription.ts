import { setTimeout as sleep } from 'node:timers/promises';
import { honoursRetryAfter, parseRetryAfter } from '../cloud/retry-policy.js';
import { errorMessage, type Logger } from '../log.js';
import { isAccessRefusal, ReconnectDelays, type ConnectionEnd } from './relay-backoff.js';
import { CatchUpPoint } from './relay-catch-up.js';
import { RelayClock } from './relay-clock.js';
import { answerUnlessAborted, readUntilAborted } from './abortable-stream.js';
import { LineSplitter, parseRelayLine } from './relay-lines.js';
import { RelayOutage, type DeliveryOutage } from './relay-outage.js';
import { requestRelayStream } from './relay-stream.js';
import type { RelayTiming } from './relay-timing.js';
import { RecentIds } from './recent-ids.js';

export interface RelaySubscriptionOptions {
  /** No trailing slash. */
  relayUrl: string;
  /** A secret: never logged. */
  topic: string;
  /** Sent as `Authorization: Bearer <token>`; a secret. */
  token?: string;
  log: Logger;
  timing: RelayTiming;
  /** The body of each fresh message, in order; false when it was not a notification. */
  onMessage: (body: Buffer) => boolean;
  /** The stream has been down longer than `faultAfterMs` (true, and why), or is back after that (false). */
  onDeliveryDown: (down: boolean, outage?: DeliveryOutage) => void;
  /** The stream is open, each time it opens. */
  onConnected?: () => void;
  /** This machine's clock; only durations and the clock warning read it, never a message's age. */
  now?: () => number;
  /** 0 to 1, for the jitter. */
  random?: () => number;
}

/** How one connection ended, and why in words for the log. */
type Outcome = ConnectionEnd & { reason: string };

/**
 * One outgoing subscription to the relay (ntfy's subscribe API: `GET <relay>/<topic>/json`), kept open
 * until stop: reopened after a break with `since=` so that nothing published meanwhile is lost,
 * dropped and reopened when it falls silent, with backoff between attempts.
 */
export class RelaySubscription {
  /** Lines that were not a relay event, messages that were not a notification, and those dropped as duplicates or stale. */
  readonly counts = { badLines: 0, rejected: 0, duplicates: 0, stale: 0 };
  private readonly stopping = new AbortController();
  private readonly seenIds = new RecentIds(1_000);
  private readonly now: () => number;
  private readonly delays: ReconnectDelays;
  private running: Promise<void> | undefined;
  private connected = false;
  /** Each ends one pending whenConnected, and removes itself. */
  private readonly waits = new Set<() => void>();
  private readonly catchUp = new CatchUpPoint();
  private readonly clock: RelayClock;
  private readonly outage: RelayOutage;
  private lastProblem = 'not connected yet';
  private accessRefused = false;
  /** By this machine's clock: how long the stream has been down is a duration, whatever the clock says. */
  private lastAliveAt: number | undefined;

  constructor(private readonly options: RelaySubscriptionOptions) {
    const { timing, log, onDeliveryDown, random, relayUrl } = options;
    this.now = options.now ?? Date.now;
    this.delays = new ReconnectDelays(timing, random);
    this.outage = new RelayOutage({ faultAfterMs: timing.faultAfterMs, log, now: this.now, onDeliveryDown: (down, since = this.now()) => onDeliveryDown(down, down ? { since, refused: this.accessRefused } : undefined) });
    this.clock = new RelayClock(this.now, relayUrl, (message) => log.warn(message));
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
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.waits.delete(end);
        resolve(this.connected && !this.stopping.signal.aborted);
      };
      const timer = setTimeout(end, timeoutMs);
      this.waits.add(end);
    });
  }

  /** How many whenConnected calls are still waiting. */
  get pendingWaits(): number {
    return this.waits.size;
  }

  /** Closes the stream and clears every timer; resolves once nothing runs any more. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.outage.stop();
    this.endWaits();
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
    // Armed before the request: a relay that never answers is as dead as one that falls silent.
    const watchdog = setTimeout(() => {
      fellSilent = true;
      attempt.abort();
    }, this.options.timing.aliveMs);
    let openedAt: number | undefined;
    try {
      const request = requestRelayStream(this.streamUrl(), this.headers(), attempt.signal);
      const response = await answerUnlessAborted(request, attempt.signal, (late) => late.body.destroy());
      if (response.status !== 200) {
        response.body.destroy();
        const retryAfter = honoursRetryAfter(response.status) ? parseRetryAfter(response.retryAfter) : undefined;
        return { kind: 'refused', status: response.status, retryAfterMs: retryAfter, reason: `HTTP ${response.status}` };
      }
      openedAt = this.now();
      this.clock.newStream();
      const splitter = new LineSplitter();
      await readUntilAborted(response.body, attempt.signal, (chunk) => {
        watchdog.refresh();
        this.lastAliveAt = this.now();
        this.markConnected();
        splitter.push(chunk).forEach((line) => this.handleLine(line));
      });
      return { kind: 'ended', livedMs: this.now() - openedAt, reason: 'the relay ended the stream' };
    } catch (error) {
      const reason = fellSilent ? `nothing arrived for ${Math.round(this.options.timing.aliveMs / 1000)} s` : describeFailure(error);
      return openedAt === undefined ? { kind: 'failed', reason } : { kind: 'ended', livedMs: this.now() - openedAt, reason };
    } finally {
      clearTimeout(watchdog);
      this.stopping.signal.removeEventListener('abort', abortOnStop);
      this.markDisconnected(fellSilent);
    }
  }

  private handleLine(line: string | undefined): void {
    const parsed = line === undefined ? { kind: 'bad' as const, reason: 'line too long' } : parseRelayLine(line);
    if (parsed.kind === 'bad') {
      this.counts.badLines += 1;
      this.options.log.debug(`Push relay: ignored a line (${parsed.reason})`);
      return;
    }
    if (parsed.kind === 'alive' && parsed.time !== undefined) {
      this.clock.alive(parsed.time);
    }
    if (parsed.kind !== 'message') {
      return;
    }
    const ageMs = this.clock.ageOf(parsed.time);
    if (this.seenIds.has(parsed.id)) {
      this.counts.duplicates += 1;
      return;
    }
    this.seenIds.add(parsed.id);
    this.catchUp.handled(parsed.id);
    if (ageMs > this.options.timing.staleMs) {
      this.counts.stale += 1;
      this.options.log.debug(`Push relay: dropped a message ${Math.round(ageMs / 1000)} s old`);
      return;
    }
    if (!this.options.onMessage(parsed.body)) {
      this.counts.rejected += 1;
    }
  }

  /** After a break, asks for what was published meanwhile (see CatchUpPoint). */
  private streamUrl(): string {
    const url = `${this.options.relayUrl}/${this.options.topic}/json`;
    const since = this.catchUp.since();
    return since === undefined ? url : `${url}?since=${encodeURIComponent(since)}`;
  }

  /** Uncompressed: a compressing proxy in front of the relay could hold lines back to fill a block. */
  private headers(): Record<string, string> {
    const identity = { 'Accept-Encoding': 'identity' };
    return this.options.token === undefined ? identity : { ...identity, Authorization: `Bearer ${this.options.token}` };
  }

  private delayAfter(outcome: Outcome): number {
    const { timing, log } = this.options;
    const delayMs = this.delays.after(outcome);
    this.accessRefused = outcome.kind === 'refused' && isAccessRefusal(outcome.status);
    if (outcome.kind === 'refused' && this.accessRefused) {
      this.lastProblem = `access refused (HTTP ${outcome.status})`;
      log.warn(`Push relay refused access (HTTP ${outcome.status}): check push.relayToken. Trying again in ${Math.round(timing.refusedRetryMs / 60_000)} minutes.`);
    } else {
      this.lastProblem = outcome.reason;
      log.debug(`Push relay: ${outcome.reason}; reconnecting in ${Math.round(delayMs)} ms`);
    }
    return delayMs;
  }

  private markConnected(): void {
    if (this.connected) {
      return;
    }
    this.connected = true;
    this.options.log.info(`push relay connected: ${this.options.relayUrl}`);
    this.outage.up();
    this.endWaits();
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
    this.catchUp.broke(this.clock.newest);
    const downForMs = fellSilent && this.lastAliveAt !== undefined ? this.now() - this.lastAliveAt : 0;
    this.outage.down(() => this.lastProblem, downForMs);
  }

  private endWaits(): void {
    [...this.waits].forEach((end) => end());
  }
}

/** The system's code for what happened (ECONNREFUSED, ECONNRESET), else the error's message. */
function describeFailure(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : errorMessage(error);
}
