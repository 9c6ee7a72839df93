/**
 * The cloud's own clock for start-up: when the simulator received the first request, and when it
 * answered each subscription. Node's http server announces every request it starts and every
 * response it finishes on diagnostics channels; the simulator's servers live in this process, so
 * this sees them whether the plugin runs here or in a Homebridge child, without touching either.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Simulator } from '../../simulator/index.js';

const REQUEST_START = 'http.server.request.start';
const RESPONSE_FINISH = 'http.server.response.finish';

const SUBSCRIPTION_PATH = /\/motions_subscribe$/;

interface ServerMessage {
  request: IncomingMessage;
  response: ServerResponse;
  socket: Socket;
}

export class CloudClock {
  private readonly ports: ReadonlySet<number>;
  private first: number | undefined;
  private readonly subscriptions: number[] = [];
  /** When each request still being answered arrived. */
  private readonly arrivals = new WeakMap<IncomingMessage, number>();
  private answered = { count: 0, totalMs: 0 };
  private readonly waiters = new Set<() => void>();

  private readonly onStart = (message: unknown): void => {
    if (this.isCloud(message as ServerMessage)) {
      const now = performance.now();
      this.first ??= now;
      this.arrivals.set((message as ServerMessage).request, now);
    }
  };

  private readonly onFinish = (message: unknown): void => {
    const { request, response } = message as ServerMessage;
    const arrivedAt = this.arrivals.get(request);
    if (arrivedAt !== undefined) {
      this.answered = { count: this.answered.count + 1, totalMs: this.answered.totalMs + performance.now() - arrivedAt };
    }
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    if (ok && this.isCloud(message as ServerMessage) && SUBSCRIPTION_PATH.test(request.url ?? '')) {
      this.subscriptions.push(performance.now());
      this.waiters.forEach((wake) => wake());
    }
  };

  /** Starts watching the simulator's three servers; stop() ends it. */
  constructor(sim: Simulator) {
    this.ports = new Set([sim.accountUrl, sim.regionUrl, sim.doorbellUrl].map((url) => Number(new URL(url).port)));
    subscribe(REQUEST_START, this.onStart);
    subscribe(RESPONSE_FINISH, this.onFinish);
  }

  /** When the first request reached the cloud. */
  get firstRequestAt(): number {
    if (this.first === undefined) {
      throw new Error('no request reached the simulator');
    }
    return this.first;
  }

  /**
   * How long the simulator took to answer a request, on average: the fixed latency, plus its own
   * work and its timers' lateness, which the ideal start-up leaves out.
   */
  get meanAnswerMs(): number {
    return this.answered.count === 0 ? Number.NaN : this.answered.totalMs / this.answered.count;
  }

  /** Resolves with the time the `count`-th successful subscription was answered; rejects after `timeoutMs`. */
  subscriptionsAnswered(count: number, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.subscriptions.length >= count) {
          settle();
          resolve(this.subscriptions[count - 1]);
        }
      };
      const settle = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const timer = setTimeout(() => {
        settle();
        reject(new Error(`${this.subscriptions.length} of ${count} subscriptions answered within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  stop(): void {
    unsubscribe(REQUEST_START, this.onStart);
    unsubscribe(RESPONSE_FINISH, this.onFinish);
  }

  private isCloud({ socket }: ServerMessage): boolean {
    return this.ports.has(socket.localPort ?? 0);
  }
}
