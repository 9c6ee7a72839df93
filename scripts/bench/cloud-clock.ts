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

/** The calls of a start-up before the subscriptions, by the path each is sent to. */
const CALL_PATHS = {
  region: /\/getUrlByEmail(\?|$)/,
  login: /\/login\/code(\?|$)/,
  registration: /\/clients_api\/device(\?|$)/,
  listRead: /\/clients_api\/ring_devices(\?|$)/,
} as const;

/** When, after the first request, the cloud answered the last call of each kind, and the first and last subscription. */
export interface CallTimes {
  lastRegionMs: number;
  lastLoginMs: number;
  firstRegistrationMs: number;
  lastRegistrationMs: number;
  /** When each registration arrived, in order: how the accounts' registrations were spread over the rounds. */
  registrationArrivalsMs: number[];
  /** When each doorbell list read arrived: each account reads its list after its first subscriptions, in the same slots. */
  listReadArrivalsMs: number[];
  firstSubscriptionMs: number;
  lastSubscriptionMs: number;
}

interface ServerMessage {
  request: IncomingMessage;
  response: ServerResponse;
  socket: Socket;
}

export class CloudClock {
  private readonly ports: ReadonlySet<number>;
  private first: number | undefined;
  private readonly subscriptions: number[] = [];
  /** Every answer of the cloud's, with its path and when it finished. */
  private readonly answers: Array<{ path: string; at: number; arrivedAt: number }> = [];
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
    if (this.isCloud(message as ServerMessage)) {
      this.answers.push({ path: request.url ?? '', at: performance.now(), arrivedAt: arrivedAt ?? Number.NaN });
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

  /**
   * When each kind of call was answered for the last time, after the first request: with several
   * accounts, how far each step of theirs ran apart. NaN for a kind the cloud never answered.
   */
  callTimes(): CallTimes {
    const from = this.firstRequestAt;
    const timesOf = (path: RegExp): number[] => this.answers.filter((answer) => path.test(answer.path)).map(({ at }) => at - from);
    const lastOf = (path: RegExp): number => {
      const times = timesOf(path);
      return times.length === 0 ? Number.NaN : Math.max(...times);
    };
    const registrations = timesOf(CALL_PATHS.registration);
    const arrivalsOf = (path: RegExp): number[] =>
      this.answers
        .filter((answer) => path.test(answer.path))
        .map(({ arrivedAt }) => arrivedAt - from)
        .sort((a, b) => a - b);
    return {
      lastRegionMs: lastOf(CALL_PATHS.region),
      lastLoginMs: lastOf(CALL_PATHS.login),
      firstRegistrationMs: registrations.length === 0 ? Number.NaN : Math.min(...registrations),
      lastRegistrationMs: lastOf(CALL_PATHS.registration),
      registrationArrivalsMs: arrivalsOf(CALL_PATHS.registration),
      listReadArrivalsMs: arrivalsOf(CALL_PATHS.listRead),
      firstSubscriptionMs: this.subscriptions.length === 0 ? Number.NaN : this.subscriptions[0] - from,
      lastSubscriptionMs: this.subscriptions.length === 0 ? Number.NaN : (this.subscriptions.at(-1) as number) - from,
    };
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
