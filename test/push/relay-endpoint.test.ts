/**
 * The relay endpoint against the project's loopback relay (ntfy protocol): one stream however often
 * the connection asks for it, and none after close.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay } from '../../simulator/relay/types.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { RelayEndpoint } from '../../src/push/relay-endpoint.js';
import type { PushSecrets } from '../../src/session/push-secrets.js';
import { createTestLogger } from '../support/homebridge-api.js';
import { delay } from '../support/platform-harness.js';
import { pollUntil } from '../support/poll.js';

const TIMING = {
  aliveMs: 1_000,
  firstReconnectMs: 20,
  maxReconnectMs: 80,
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

function newEndpoint(readSecrets: () => Promise<PushSecrets>): RelayEndpoint {
  endpoint = new RelayEndpoint({
    settings: { relayUrl: relay.url },
    secrets: readSecrets,
    log: new SecretMaskingLogger(createTestLogger()),
    onNotification: () => undefined,
    onDeliveryDown: () => undefined,
    timing: TIMING,
    connectWaitMs: 2_000,
  });
  return endpoint;
}

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

  it('opens no stream when closed while an open is still reading push.json', async () => {
    let release: (value: PushSecrets) => void = () => undefined;
    const relayEndpoint = newEndpoint(() => new Promise((resolve) => (release = resolve)));

    const opening = relayEndpoint.open();
    await relayEndpoint.close();
    release(secrets);

    await expect(opening).rejects.toThrow('The push relay endpoint is closed.');
    await delay(200);
    expect(streamRequests()).toEqual([]);
  });
});
