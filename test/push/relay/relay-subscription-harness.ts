/**
 * What the relay client's tests share: the project's loopback relay (ntfy protocol), started for each
 * test with keepalives well within the shortened alive timeout, subscriptions stopped after it, and
 * the questions the tests ask of both.
 */
import { afterEach, beforeEach, expect, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startRelay } from '../../../simulator/relay/index.js';
import type { Relay, RelayOptions } from '../../../simulator/relay/index.js';
import { RelaySubscription } from '../../../src/push/relay/subscription.js';
import type { RelayTiming } from '../../../src/push/relay/subscription.js';
import { createTestLogger } from '../../../scripts/lib/homebridge-api.js';

export const TIMING: RelayTiming = {
  aliveMs: 400,
  reconnect: { firstMs: 20, factor: 2, maxMs: 80, jitter: true },
  stableMs: 10_000,
  refusedRetryMs: 500,
  maxRetryAfterMs: 1_000,
  faultAfterMs: 250,
  staleMs: 120_000,
};

/** Well inside TIMING.aliveMs, as ntfy's 45 s are inside the production 100 s. */
const KEEPALIVE_MS = 100;

/** The test's relay; an exported binding, so it is the current one wherever it is read. */
export let relay: Relay;
const running: RelaySubscription[] = [];

/** Replaces the test's relay with one started with these options. */
export async function useRelay(options: RelayOptions = {}): Promise<void> {
  await relay?.close();
  relay = await startRelay({ keepaliveMs: KEEPALIVE_MS, ...options });
}

beforeEach(async () => {
  relay = await startRelay({ keepaliveMs: KEEPALIVE_MS });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((subscription) => subscription.stop()));
  await relay.close();
  jest.useRealTimers();
});

/**
 * Fakes setTimeout alone, until the test ends: the subscription's watchdog, fault delay and connect
 * waits then fire only when the test moves the clock (jest.advanceTimersByTime), so a busy machine
 * cannot fire them early, while the sockets, the relay's keepalives and the backoff between attempts
 * stay real. `jest.now()` reads the faked clock, for the subscription's monotonicNow.
 */
export function fakeTimeouts(): void {
  jest.useFakeTimers({
    doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval'],
  });
}

/** A subscription to a topic of its own, started; `now` is the wall clock. */
export function subscribe(overrides: { token?: string; timing?: Partial<RelayTiming>; now?: () => number; monotonicNow?: () => number; relayUrl?: string } = {}) {
  const topic = `up${randomBytes(9).toString('base64url')}`;
  const bodies: string[] = [];
  const down: boolean[] = [];
  /** The age of each message dropped as stale, as the drop listener hears of it. */
  const stale: number[] = [];
  const log = createTestLogger();
  const subscription = new RelaySubscription({
    relay: { relayUrl: overrides.relayUrl ?? relay.url, relayToken: overrides.token },
    topic,
    log,
    timing: { ...TIMING, ...overrides.timing },
    now: overrides.now,
    monotonicNow: overrides.monotonicNow,
    onMessage: (body) => bodies.push(body.toString('utf8')),
    onDeliveryDown: (isDown) => down.push(isDown),
    onStale: (ageMs) => stale.push(ageMs),
  });
  running.push(subscription);
  subscription.start();
  return { subscription, topic, bodies, down, stale, log };
}

type Running = ReturnType<typeof subscribe>;

export async function connected(run: Running): Promise<void> {
  expect(await run.subscription.whenConnected(3_000)).toBe(true);
}

export const subscribeRequests = (topic: string) => relay.requests.filter((request) => request.method === 'GET' && request.path === `/${topic}/json`);
export const lines = (run: Running, level: string) => run.log.lines.filter((line) => line.level === level).map((line) => line.message);
