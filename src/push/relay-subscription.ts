import { setTimeout as sleep } from 'node:timers/promises';
import { honoursRetryAfter, parseRetryAfter } from '../cloud/retry-policy.js';
import { errorMessage, type Logger } from '../log.js';
import { isAccessRefusal, ReconnectDelays, type ConnectionEnd } from './relay-backoff.js';
import { CatchUpPoint } from './relay-catch-up.js';
import { LineSplitter, parseRelayLine } from './relay-lines.js';
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
  /** The stream has been down longer than `faultAfterMs` (true), or is back after that (false). */
  onDeliveryDown: (down: boolean) => void;
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
  private connectedListeners: Array<() => void> = [];
  private readonly catchUp = new CatchUpPoint();
  private lastProblem = 'not connected yet';
  private downTimer: NodeJS.Timeout | undefined;
  private reportedDown = false;

  constructor(private readonly options: RelaySubscriptionOptions) {
    this.now = options.now ?? Date.now;
    this.delays = new ReconnectDelays(options.timing, options.random);
  }

  start(): void {
    if (this.running === undefined) {
      this.armDownTimer();
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
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.connectedListeners.push(() => {
        clearTimeout(timer);
        resolve(this.connected);
      });
    });
  }

  /** Closes the stream and clears every timer; resolves once nothing runs any more. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.downTimer);
    this.notifyConnectedListeners();
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
    const stream = new AbortController();
    const signal = AbortSignal.any([stream.signal, this.stopping.signal]);
    // Armed before the request: a relay that never answers is as dead as one that falls silent.
    const watchdog = setTimeout(() => stream.abort(), this.options.timing.aliveMs);
    let openedAt: number | undefined;
    try {
      const response = await fetch(this.streamUrl(), { headers: this.headers(), signal, redirect: 'error' });
      if (response.status !== 200 || response.body === null) {
        await response.body?.cancel().catch(() => undefined);
        const retryAfter = honoursRetryAfter(response.status) ? parseRetryAfter(response.headers.get('retry-after')) : undefined;
        return { kind: 'refused', status: response.status, retryAfterMs: retryAfter, reason: `HTTP ${response.status}` };
      }
      openedAt = this.now();
      await this.readLines(response.body, () => watchdog.refresh());
      return { kind: 'ended', livedMs: this.now() - openedAt, reason: 'the relay ended the stream' };
    } catch (error) {
      // Only the watchdog aborts `stream`.
      const reason = stream.signal.aborted ? `nothing arrived for ${Math.round(this.options.timing.aliveMs / 1000)} s` : describeFailure(error);
      return openedAt === undefined ? { kind: 'failed', reason } : { kind: 'ended', livedMs: this.now() - openedAt, reason };
    } finally {
      clearTimeout(watchdog);
      this.markDisconnected(stream.signal.aborted);
    }
  }

  private async readLines(body: ReadableStream<Uint8Array>, feedWatchdog: () => void): Promise<void> {
    const splitter = new LineSplitter();
    const reader = body.getReader();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        feedWatchdog();
        this.catchUp.alive(this.now());
        this.markConnected();
        for (const line of splitter.push(chunk.value)) {
          this.handleLine(line);
        }
      }
    } finally {
      reader.releaseLock();
    }
  }

  private handleLine(line: string | undefined): void {
    const parsed = line === undefined ? { kind: 'bad' as const, reason: 'line too long' } : parseRelayLine(line);
    if (parsed.kind === 'bad') {
      this.counts.badLines += 1;
      this.options.log.debug(`Push relay: ignored a line (${parsed.reason})`);
      return;
    }
    if (parsed.kind !== 'message') {
      return;
    }
    if (this.seenIds.has(parsed.id)) {
      this.counts.duplicates += 1;
      return;
    }
    this.seenIds.add(parsed.id);
    this.catchUp.handled(parsed.id);
    const ageMs = this.now() - parsed.time * 1000;
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
    if (outcome.kind === 'refused' && isAccessRefusal(outcome.status)) {
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
    clearTimeout(this.downTimer);
    this.options.log.info(`push relay connected: ${this.options.relayUrl}`);
    if (this.reportedDown) {
      this.reportedDown = false;
      this.options.onDeliveryDown(false);
    }
    this.notifyConnectedListeners();
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
    this.catchUp.broke();
    const lastAliveAt = this.catchUp.lastAliveAt;
    this.armDownTimer(fellSilent && lastAliveAt !== undefined ? this.now() - lastAliveAt : 0);
  }

  private armDownTimer(downForMs = 0): void {
    if (this.stopping.signal.aborted) {
      return;
    }
    clearTimeout(this.downTimer);
    const downSince = this.now() - downForMs;
    this.downTimer = setTimeout(() => {
      this.reportedDown = true;
      const seconds = Math.round((this.now() - downSince) / 1000);
      this.options.log.warn(`Push relay unreachable for ${seconds} s (${this.lastProblem}): motion alerts cannot arrive until it is back. Still trying.`);
      this.options.onDeliveryDown(true);
    }, Math.max(0, this.options.timing.faultAfterMs - downForMs));
  }

  private notifyConnectedListeners(): void {
    const listeners = this.connectedListeners;
    this.connectedListeners = [];
    listeners.forEach((listener) => listener());
  }
}

/** fetch's own message is "fetch failed"; its cause says what happened (ECONNREFUSED, a redirect). */
function describeFailure(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : errorMessage(cause ?? error);
}
