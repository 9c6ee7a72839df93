/**
 * The relay endpoint against the project's loopback relay (ntfy protocol): one stream however often
 * the connection asks for it, none while suspended (signed out) and none after close.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay } from '../../simulator/relay/index.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { RelayEndpoint } from '../../src/push/relay-endpoint.js';
import type { PushSecrets } from '../../src/session/push-secrets.js';
import { createTestLogger, type TestLogger } from '../support/homebridge-api.js';
import { delay } from '../support/platform-harness.js';
import { pollUntil } from '../support/poll.js';

const TIMING = {
  aliveMs: 1_000,
  reconnect: { firstMs: 20, factor: 2, maxMs: 80, jitter: true },
  stableMs: 10_000,
  refusedRetryMs: 500,
  maxRetryAfterMs: 1_000,
  faultAfterMs: 5_000,
  staleMs: 120_000,
};

let relay: Relay;
let endpoint: RelayEndpoint | undefined;
const secrets: PushSecrets = { receiverSecret: 'r'.repeat(43), relayTopic: `up${randomBytes(9).toString('base64url')}` };

beforeEach(async () => {
  relay = await startRelay({ keepaliveMs: 200 });
});

afterEach(async () => {
  await endpoint?.close();
  await relay.close();
});

let log: TestLogger;
/** What the endpoint reported of the stream: down too long (true) or not (false), and each time it opened. */
let reports: Array<boolean | 'connected'>;

function newEndpoint(readSecrets: () => Promise<PushSecrets>, timing: Partial<typeof TIMING> = {}): RelayEndpoint {
  log = createTestLogger();
  reports = [];
  endpoint = new RelayEndpoint({
    settings: { relayUrl: relay.url },
    secrets: readSecrets,
    log: new SecretMaskingLogger(log),
    onNotification: () => undefined,
    onDeliveryDown: (down) => reports.push(down),
    onConnected: () => reports.push('connected'),
    timing: { ...TIMING, ...timing },
    connectWaitMs: 2_000,
  });
  return endpoint;
}

const subscribers = () => relay.subscriberCount(secrets.relayTopic);
const waitForSubscribers = (count: number, what: string) => pollUntil(subscribers, (current) => current === count, 2_000, what, 10);

const streamRequests = () => relay.requests.filter((request) => request.method === 'GET' && request.path === `/${secrets.relayTopic}/json`);

describe('RelayEndpoint', () => {
  it('opens one stream for overlapping opens, and close ends it', async () => {
    const relayEndpoint = newEndpoint(async () => secrets);

    const tokens = await Promise.all([relayEndpoint.open(), relayEndpoint.open()]);
    await relayEndpoint.open();

    expect(tokens).toEqual([`${relay.url}/${secrets.relayTopic}?up=1`, `${relay.url}/${secrets.relayTopic}?up=1`]);
    expect(streamRequests()).toHaveLength(1);
    expect(relay.subscriberCount(secrets.relayTopic)).toBe(1);
    await relayEndpoint.close();
    await pollUntil(() => relay.subscriberCount(secrets.relayTopic), (count) => count === 0, 2_000, 'the stream to end', 10);
  });

  it.each([
    ['closed (shutdown)', (ending: RelayEndpoint) => ending.close(), 'The push relay endpoint is closed.', 'refused'],
    ['suspended (a sign-out)', (ending: RelayEndpoint) => ending.suspend(), 'The push relay stream was closed before it opened.', 'opened'],
  ])('opens no stream when %s while an open is still reading push.json', async (_how, end, message, nextOpen) => {
    let release: (value: PushSecrets) => void = () => undefined;
    const relayEndpoint = newEndpoint(() => new Promise((resolve) => (release = resolve)));

    const opening = relayEndpoint.open();
    await end(relayEndpoint);
    release(secrets);

    await expect(opening).rejects.toThrow(message);
    await delay(200);
    expect(streamRequests()).toEqual([]);
    const reopening = relayEndpoint.open();
    release(secrets);
    expect(await reopening.then(() => 'opened', () => 'refused')).toBe(nextOpen);
  });

  it('closes the stream on suspend, and opens a new one with the same push token on the next open', async () => {
    const relayEndpoint = newEndpoint(async () => secrets);
    const token = await relayEndpoint.open();

    await relayEndpoint.suspend();
    await waitForSubscribers(0, 'the relay to see its subscriber go');
    await delay(200);
    expect(streamRequests()).toHaveLength(1);

    await expect(relayEndpoint.open()).resolves.toBe(token);
    expect(subscribers()).toBe(1);
    expect(streamRequests()).toHaveLength(2);
    expect(reports).toEqual(['connected', 'connected']);
  });

  it('reports no outage while suspended, and clears one it had reported', async () => {
    const relayEndpoint = newEndpoint(async () => secrets, { faultAfterMs: 150 });
    await relayEndpoint.open();
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    relay.dropStreams();
    await pollUntil(() => reports, (current) => current.includes(true), 2_000, 'the outage', 10);

    await relayEndpoint.suspend();
    await delay(400);

    expect(reports).toEqual(['connected', true, false]);
    expect(log.lines.filter(({ level }) => level === 'warn')).toHaveLength(1);
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });

  it('never reports an outage that began just before a suspend', async () => {
    const relayEndpoint = newEndpoint(async () => secrets, { faultAfterMs: 150 });
    await relayEndpoint.open();
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    relay.dropStreams();

    await relayEndpoint.suspend();
    await delay(400);

    expect(reports).toEqual(['connected']);
    expect(log.lines.filter(({ level }) => level === 'warn')).toEqual([]);
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });

  it('fails an open still waiting for the stream when suspended, saying the stream was closed', async () => {
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    const relayEndpoint = newEndpoint(async () => secrets);
    const opening = relayEndpoint.open();
    await pollUntil(() => streamRequests().length, (count) => count > 0, 2_000, 'the first attempt', 10);

    await relayEndpoint.suspend();

    await expect(opening).rejects.toThrow('The push relay stream was closed before it opened.');
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });
});
