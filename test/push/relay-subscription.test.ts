/**
 * The relay client against the project's loopback relay (ntfy protocol) over real HTTP, with its
 * timings shortened: the stream, its lines, catch-up after a break, silence, refusals, faults and stop.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay, RelayOptions } from '../../simulator/relay/types.js';
import { RelaySubscription } from '../../src/push/relay-subscription.js';
import type { RelayTiming } from '../../src/push/relay-timing.js';
import { createTestLogger, type TestLogger } from '../support/homebridge-api.js';
import { pollUntil } from '../support/poll.js';

const TIMING: RelayTiming = {
  aliveMs: 400,
  firstReconnectMs: 20,
  maxReconnectMs: 80,
  stableMs: 10_000,
  refusedRetryMs: 500,
  maxRetryAfterMs: 1_000,
  faultAfterMs: 250,
  staleMs: 120_000,
};

interface Running {
  subscription: RelaySubscription;
  topic: string;
  bodies: string[];
  down: boolean[];
  log: TestLogger;
}

let relay: Relay;
const running: RelaySubscription[] = [];

async function useRelay(options: RelayOptions = {}): Promise<void> {
  await relay?.close();
  relay = await startRelay(options);
}

beforeEach(async () => {
  relay = await startRelay();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((subscription) => subscription.stop()));
  await relay.close();
});

function newTopic(): string {
  return `up${randomBytes(9).toString('base64url')}`;
}

function subscribe(overrides: { token?: string; timing?: Partial<RelayTiming>; now?: () => number; relayUrl?: string } = {}): Running {
  const topic = newTopic();
  const bodies: string[] = [];
  const down: boolean[] = [];
  const log = createTestLogger();
  const subscription = new RelaySubscription({
    relayUrl: overrides.relayUrl ?? relay.url,
    topic,
    token: overrides.token,
    log,
    timing: { ...TIMING, ...overrides.timing },
    now: overrides.now,
    onMessage: (body) => {
      const text = body.toString('utf8');
      bodies.push(text);
      return text.startsWith('{');
    },
    onDeliveryDown: (isDown) => down.push(isDown),
  });
  running.push(subscription);
  subscription.start();
  return { subscription, topic, bodies, down, log };
}

async function connected(run: Running): Promise<void> {
  expect(await run.subscription.whenConnected(3_000)).toBe(true);
}

function waitFor(condition: () => boolean, what: string, timeoutMs = 3_000): Promise<boolean> {
  return pollUntil(condition, (held) => held, timeoutMs, what, 10);
}

const subscribeRequests = (topic: string) => relay.requests.filter((request) => request.method === 'GET' && request.path === `/${topic}/json`);
const lines = (run: Running, level: string) => run.log.lines.filter((line) => line.level === level).map((line) => line.message);
const messageLine = (fields: Record<string, unknown>) => JSON.stringify({ event: 'message', topic: 't', ...fields });

describe('the stream', () => {
  it('subscribes to <relay>/<topic>/json without since, and says it is connected, without the topic', async () => {
    const run = subscribe();
    await connected(run);

    expect(subscribeRequests(run.topic).map((request) => request.rawQuery)).toEqual(['']);
    expect(subscribeRequests(run.topic)[0]?.headers.authorization).toBeUndefined();
    expect(relay.subscriberCount(run.topic)).toBe(1);
    expect(lines(run, 'info')).toEqual([`push relay connected: ${relay.url}`]);
  });

  it('sends the access token as a bearer token, and never logs it or the topic', async () => {
    await useRelay({ tokens: ['tk_relaytoken0123456789abcdefghi'] });
    const run = subscribe({ token: 'tk_relaytoken0123456789abcdefghi' });
    await connected(run);
    relay.publish(run.topic, '{"device_id":1,"kind":"motion"}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 1, 'the message');

    expect(subscribeRequests(run.topic)[0]?.headers.authorization).toBe('Bearer tk_relaytoken0123456789abcdefghi');
    expect(run.log.lines.filter(({ message }) => message.includes(run.topic) || message.includes('tk_relaytoken'))).toEqual([]);
  });

  it('hands over each published body as published, base64 ones decoded', async () => {
    const run = subscribe();
    await connected(run);

    relay.publish(run.topic, '{"device_id":1234567,"kind":"motion","id":"a"}', { unifiedPush: true });
    relay.publish(run.topic, Buffer.from([0x7b, 0xff, 0x7d]), { unifiedPush: true });
    await waitFor(() => run.bodies.length === 2, 'two messages');

    expect(run.bodies[0]).toBe('{"device_id":1234567,"kind":"motion","id":"a"}');
    expect(Buffer.from(run.bodies[1], 'utf8')).toEqual(Buffer.from('{\ufffd}', 'utf8'));
  });

  it('ignores open, keepalive and unknown events, and counts bad lines and bad notifications without ending the stream', async () => {
    const run = subscribe();
    await connected(run);
    const now = Math.floor(Date.now() / 1000);
    for (const line of [
      'not json',
      '[1,2]',
      '{"event":"keepalive","id":"k","time":1}',
      '{"event":"poll_request","id":"p","time":1,"message":"New message"}',
      messageLine({ time: now, message: 'no id' }),
      messageLine({ id: 'bad1', time: now, message: 'not a notification' }),
      'x'.repeat(70 * 1024),
    ]) {
      relay.injectLine(run.topic, line);
    }
    relay.publish(run.topic, '{"device_id":1,"kind":"motion"}', { unifiedPush: true });
    await waitFor(() => run.bodies.includes('{"device_id":1,"kind":"motion"}'), 'the good message');

    expect(run.subscription.counts).toMatchObject({ badLines: 4, rejected: 1 });
    expect(run.bodies).toEqual(['not a notification', '{"device_id":1,"kind":"motion"}']);
    expect(lines(run, 'debug').filter((line) => line.startsWith('Push relay: ignored a line'))).toHaveLength(4);
    expect(subscribeRequests(run.topic)).toHaveLength(1);
    expect([...lines(run, 'warn'), ...lines(run, 'error')]).toEqual([]);
  });

  it('drops a message seen before (same relay id), and a stale one, logging the stale one at debug', async () => {
    const run = subscribe();
    await connected(run);
    const now = Math.floor(Date.now() / 1000);
    relay.injectLine(run.topic, messageLine({ id: 'same', time: now, message: '{"first":1}' }));
    relay.injectLine(run.topic, messageLine({ id: 'same', time: now, message: '{"first":1}' }));
    relay.injectLine(run.topic, messageLine({ id: 'old', time: now - 121, message: '{"stale":1}' }));
    relay.injectLine(run.topic, messageLine({ id: 'last', time: now - 100, message: '{"last":1}' }));
    await waitFor(() => run.bodies.length === 2, 'two messages');

    expect(run.bodies).toEqual(['{"first":1}', '{"last":1}']);
    expect(run.subscription.counts).toMatchObject({ duplicates: 1, stale: 1 });
    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: dropped a message 12\d s old$/));
  });
});

describe('breaks', () => {
  it('reopens a dropped stream with since=<last message id> and loses nothing published meanwhile', async () => {
    const run = subscribe();
    await connected(run);
    const first = relay.publish(run.topic, '{"n":1}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 1, 'the first message');

    relay.dropStreams();
    relay.publish(run.topic, '{"n":2}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 2, 'the message published during the break');

    expect(run.bodies).toEqual(['{"n":1}', '{"n":2}']);
    expect(subscribeRequests(run.topic).map((request) => request.rawQuery)).toEqual(['', `since=${first.id}`]);
  });

  it('asks since the time of the break when no message was handled yet', async () => {
    const run = subscribe();
    await connected(run);
    const brokeAt = Math.floor(Date.now() / 1000);
    relay.dropStreams();
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the reconnect');

    const since = Number(new URLSearchParams(subscribeRequests(run.topic)[1]?.rawQuery).get('since'));
    expect(since).toBeGreaterThanOrEqual(brokeAt);
    expect(since).toBeLessThanOrEqual(brokeAt + 1);
  });

  it('drops a stream that falls silent and opens a new one', async () => {
    const run = subscribe();
    await connected(run);
    relay.setSilent(true);
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the reopened stream');
    relay.setSilent(false);

    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: nothing arrived for 0 s; reconnecting in \d+ ms$/));
  });

  it('shows a fault while the relay has been unreachable too long, and clears it when back', async () => {
    const run = subscribe();
    await connected(run);
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    relay.dropStreams();
    await waitFor(() => run.down.length === 1, 'the fault');

    expect(run.down).toEqual([true]);
    expect(lines(run, 'warn')).toEqual([expect.stringMatching(/^Push relay unreachable for 0 s \(HTTP 503\): motion alerts cannot arrive until it is back/)]);
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });
});

describe('refusals', () => {
  it('honours Retry-After on 429', async () => {
    relay.refuseSubscriptions({ status: 429, retryAfter: '1' });
    const started = performance.now();
    const run = subscribe();
    await connected(run);

    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(subscribeRequests(run.topic).map((request) => request.status)).toEqual([429, 200]);
  });

  it('says the relay refused access, naming push.relayToken, and tries again after the refused-access wait', async () => {
    await useRelay({ tokens: ['tk_relaytoken0123456789abcdefghi'] });
    const started = performance.now();
    const run = subscribe({ token: 'tk_wrongtoken0123456789abcdefghi' });
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the second attempt');

    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
    expect(subscribeRequests(run.topic).map((request) => request.status)).toEqual([401, 401]);
    expect(lines(run, 'warn')[0]).toBe('Push relay refused access (HTTP 401): check push.relayToken. Trying again in 0 minutes.');
    expect(run.log.lines.some(({ message }) => message.includes('tk_wrongtoken'))).toBe(false);
  });
});

describe('stop', () => {
  it('closes the stream, ends waiting, and leaves nothing running', async () => {
    const run = subscribe();
    await connected(run);

    await run.subscription.stop();

    await waitFor(() => relay.subscriberCount(run.topic) === 0, 'the relay to see the stream end');
    await expect(run.subscription.whenConnected(5_000)).resolves.toBe(false);
  });

  it('stops while reconnecting, without another attempt', async () => {
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    const run = subscribe({ timing: { firstReconnectMs: 300, maxReconnectMs: 300 } });
    await waitFor(() => subscribeRequests(run.topic).length === 1, 'the first attempt');

    await run.subscription.stop();
    await new Promise((resolve) => setTimeout(resolve, 700));

    expect(subscribeRequests(run.topic)).toHaveLength(1);
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });
});
