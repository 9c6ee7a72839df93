/**
 * The relay endpoint against the project's loopback relay (ntfy protocol): one stream however often
 * the connection asks for it, none while suspended (signed out) and none after close; and nothing the
 * relay received while no stream was open lost, after a sign-out and a new sign-in or a restart
 * (relay.json, in a real data folder).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startRelay } from '../../../simulator/relay/index.js';
import type { Relay } from '../../../simulator/relay/index.js';
import { SecretMaskingLogger } from '../../../src/log.js';
import { CATCH_UP_SLACK_S, MARK_WRITE_INTERVAL_MS } from '../../../src/push/relay/messages.js';
import { RelayEndpoint } from '../../../src/push/relay/endpoint.js';
import { DATA_FILES, dataFolderPath, openDataFolder } from '../../../src/storage/data-folder.js';
import type { PushSecrets } from '../../../src/session/push-secrets.js';
import { RelayMarkStore, type RelayMark } from '../../../src/session/relay-mark.js';
import { eachTest } from '../../support/each-test.js';
import { createTestLogger, type TestLogger } from '../../../scripts/lib/homebridge-api.js';
import { SHAPES } from '../../support/notification-payloads.js';
import { delay, temporaryStorage } from '../../../scripts/lib/platform-harness.js';
import { pollUntil } from '../../../scripts/lib/poll.js';
import { ReadingClock } from '../../support/reading-clock.js';

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
/** The event id of each notification the endpoint handed on, in order. */
let delivered: Array<string | undefined>;

/** The endpoint's monotonic clock: a write of relay.json reads it right before it calls the store. */
const markClock = new ReadingClock();

/** Each write of relay.json as it began: when, what, and the notifications handed on by then. */
let markWrites: Array<{ at: number; mark: RelayMark; delivered: Array<string | undefined> }>;

/** relay.json in the storage's data folder, opened as a new process would, each write recorded. */
function keptIn(storagePath: string): Pick<RelayMarkStore, 'read' | 'write'> {
  const store = new RelayMarkStore(openDataFolder(storagePath, log), log);
  return {
    read: (relayUrl, topic) => store.read(relayUrl, topic),
    write: (relayUrl, topic, mark) => {
      // The endpoint reads its clock for a write right before it calls the store.
      markWrites.push({ at: markClock.lastReading, mark, delivered: [...delivered] });
      return store.write(relayUrl, topic, mark);
    },
  };
}

/** `storagePath`: relay.json kept in its data folder. */
function newEndpoint(readSecrets: () => Promise<PushSecrets>, timing: Partial<typeof TIMING> = {}, storagePath?: string): RelayEndpoint {
  log = createTestLogger();
  reports = [];
  delivered = [];
  markWrites = [];
  endpoint = new RelayEndpoint({
    settings: { relayUrl: relay.url },
    secrets: readSecrets,
    relayMarks: storagePath === undefined ? undefined : keptIn(storagePath),
    log: new SecretMaskingLogger(log),
    onNotification: (notification) => delivered.push(notification.id),
    onDeliveryDown: (down) => reports.push(down),
    onConnected: () => reports.push('connected'),
    timing: { ...TIMING, ...timing },
    connectWaitMs: 2_000,
    monotonicNow: markClock.now,
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

/** A ring with this event id, as the doorbell service publishes it to the relay. */
const ring = (eventId: string) => relay.publish(secrets.relayTopic, SHAPES.flat({ deviceId: '1234567', kind: 'ding', id: `"${eventId}"` }), { unifiedPush: true });
const sinceOf = (request: { rawQuery: string } | undefined) => new URLSearchParams(request?.rawQuery).get('since');
const waitForDelivered = (count: number, what: string) => pollUntil(() => delivered.length, (current) => current >= count, 3_000, what, 10);
const warnings = () => log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message);

describe('RelayEndpoint across a sign-out and a new sign-in', () => {
  it('asks the reopened stream for what was published after the last message handled', async () => {
    const relayEndpoint = newEndpoint(async () => secrets);
    await relayEndpoint.open();
    const first = ring('before-the-sign-out');
    await waitForDelivered(1, 'the first ring');

    await relayEndpoint.suspend();
    await waitForSubscribers(0, 'the stream to close');
    ring('while-signed-out');
    await relayEndpoint.open();
    await waitForDelivered(2, 'the ring published while signed out');

    expect(delivered).toEqual(['before-the-sign-out', 'while-signed-out']);
    expect(streamRequests().map(sinceOf)).toEqual([null, first.id]);
  });

  it('asks from the relay time the closed stream showed, less the slack, when no message was handled yet', async () => {
    const relayEndpoint = newEndpoint(async () => secrets);
    const opened = Math.floor(Date.now() / 1000);
    await relayEndpoint.open();

    await relayEndpoint.suspend();
    await waitForSubscribers(0, 'the stream to close');
    const closed = Math.floor(Date.now() / 1000);
    ring('while-signed-out');
    await relayEndpoint.open();
    await waitForDelivered(1, 'the ring published while signed out');

    expect(delivered).toEqual(['while-signed-out']);
    const since = Number(sinceOf(streamRequests()[1]));
    expect(since).toBeGreaterThanOrEqual(opened - CATCH_UP_SLACK_S);
    expect(since).toBeLessThanOrEqual(closed - CATCH_UP_SLACK_S);
  });
});

describe('RelayEndpoint across a restart (relay.json)', () => {
  const storage = eachTest('storage', temporaryStorage, (folder) => folder.remove());
  const relayJson = () => join(dataFolderPath(storage().path), DATA_FILES.relay);
  /** Another process's store, on the same storage. */
  const marks = () => new RelayMarkStore(openDataFolder(storage().path, createTestLogger()), createTestLogger());
  /** The first stream of a run on this storage. */
  async function firstStream(): Promise<string | null> {
    relay.reset();
    const relayEndpoint = newEndpoint(async () => secrets, {}, storage().path);
    await relayEndpoint.open();
    return sinceOf(streamRequests()[0]);
  }

  it('delivers what the relay received while Homebridge restarted, and not what the last run delivered', async () => {
    const before = newEndpoint(async () => secrets, {}, storage().path);
    await before.open();
    const first = ring('before-the-restart');
    await waitForDelivered(1, 'the first ring');
    await before.close();

    ring('during-the-restart');
    relay.reset();
    const after = newEndpoint(async () => secrets, {}, storage().path);
    await after.open();
    await waitForDelivered(1, 'the ring published during the restart');
    await delay(200);

    expect(delivered).toEqual(['during-the-restart']);
    expect(streamRequests().map(sinceOf)).toEqual([first.id]);
  });

  it('catches up after a run that ended without a shutdown (a crash) before it handled any ring', async () => {
    const before = newEndpoint(async () => secrets, {}, storage().path);
    await before.open();
    // Kept from the stream's first relay time, before any ring and before any shutdown.
    const leftByTheCrash = await pollUntil(() => readFile(relayJson(), 'utf8').catch(() => ''), (text) => text.includes('relayTime'), 3_000, 'relay.json', 20);
    await before.close();
    // What a crash leaves: the file as it was before the shutdown's write.
    await writeFile(relayJson(), leftByTheCrash, { mode: 0o600 });

    ring('while-homebridge-was-down');
    relay.reset();
    const after = newEndpoint(async () => secrets, {}, storage().path);
    await after.open();
    await waitForDelivered(1, 'the ring published while Homebridge was down');

    expect(delivered).toEqual(['while-homebridge-was-down']);
  });

  it('keeps the mark in a file only its owner may read, with the relay it belongs to and no topic in clear', async () => {
    const relayEndpoint = newEndpoint(async () => secrets, {}, storage().path);
    await relayEndpoint.open();
    const { id } = ring('a-ring');
    // Written soon after the ring, not only at shutdown: a crash keeps it too.
    const text = await pollUntil(() => readFile(relayJson(), 'utf8').catch(() => ''), (current) => current.includes(id), 3_000, 'relay.json', 20);

    expect((await stat(relayJson())).mode & 0o777).toBe(0o600);
    expect(text).not.toContain(secrets.relayTopic);
    expect(JSON.parse(text)).toEqual({ relayUrl: relay.url, topicSha256: expect.stringMatching(/^[0-9a-f]{64}$/), lastMessageId: id });
  });

  it('writes relay.json after handing each ring on, at most once a second, ending with the last ring', async () => {
    const relayEndpoint = newEndpoint(async () => secrets, {}, storage().path);
    await relayEndpoint.open();
    const ids = [ring('one').id];
    await pollUntil(() => markWrites.length, (count) => count === 1, 3_000, 'the first ring written', 20);
    ids.push(ring('two').id, ring('three').id);
    await waitForDelivered(3, 'the rings');
    await pollUntil(() => markWrites.at(-1)?.mark, (mark) => mark !== undefined && 'lastMessageId' in mark && mark.lastMessageId === ids[2], 3_000, 'the last ring written', 20);
    await relayEndpoint.close();

    const gaps = markWrites.slice(1).map((write, index) => write.at - markWrites[index].at);
    expect(gaps.length).toBeGreaterThan(0);
    // Timers count whole milliseconds: one may fire a fraction of one early by this clock.
    expect(gaps.filter((gap) => gap < MARK_WRITE_INTERVAL_MS - 1)).toEqual([]);
    for (const { mark, delivered: handedOn } of markWrites) {
      expect(handedOn).toHaveLength(ids.indexOf((mark as { lastMessageId: string }).lastMessageId) + 1);
    }
    expect(JSON.parse(await readFile(relayJson(), 'utf8'))).toMatchObject({ lastMessageId: ids[2] });
  });

  it('asks the first stream from a kept relay time less the slack when no message was handled yet', async () => {
    const relayTime = Math.floor(Date.now() / 1000) - 30;
    await marks().write(relay.url, secrets.relayTopic, { relayTime });

    expect(await firstStream()).toBe(String(relayTime - CATCH_UP_SLACK_S));
  });

  it('keeps the relay time of a run that handled no message, for the next', async () => {
    const before = newEndpoint(async () => secrets, {}, storage().path);
    const opened = Math.floor(Date.now() / 1000);
    await before.open();
    await before.close();
    const closed = Math.floor(Date.now() / 1000);

    const since = Number(await firstStream());
    expect(since).toBeGreaterThanOrEqual(opened - CATCH_UP_SLACK_S);
    expect(since).toBeLessThanOrEqual(closed - CATCH_UP_SLACK_S);
  });

  it.each([
    ['another relay', () => ({ relayUrl: 'https://ntfy.example.net', topic: secrets.relayTopic })],
    ['another topic', () => ({ relayUrl: relay.url, topic: `up${randomBytes(9).toString('base64url')}` })],
  ])('ignores a mark kept for %s', async (_what, owner) => {
    const { relayUrl, topic } = owner();
    await marks().write(relayUrl, topic, { lastMessageId: 'AbCdEf123456' });

    expect(await firstStream()).toBeNull();
    expect(warnings()).toEqual([]);
  });

  it('asks for no catch-up, without a word, on a first run', async () => {
    expect(await firstStream()).toBeNull();
    expect(warnings()).toEqual([]);
  });

  it('asks for no catch-up, with a warning, when relay.json is corrupt', async () => {
    await mkdir(dataFolderPath(storage().path), { recursive: true, mode: 0o700 });
    await writeFile(relayJson(), '{"relayUrl": ', { mode: 0o600 });

    expect(await firstStream()).toBeNull();
    expect(warnings()).toEqual([expect.stringMatching(/^Ignoring .*relay\.json: it is not valid JSON/)]);
  });

  it('opens the stream when relay.json cannot be read, with a warning, and reads it again for the next stream', async () => {
    const relayEndpoint = newEndpoint(async () => secrets, {}, storage().path);
    // A folder where the file should be: it exists, and reading it fails (EISDIR), as a file with no free descriptor would.
    await mkdir(relayJson(), { recursive: true });
    await relayEndpoint.open();
    expect(sinceOf(streamRequests()[0])).toBeNull();
    expect(warnings()).toEqual([expect.stringMatching(/^Could not read .*relay\.json: .*The push relay stream opens without asking for what the relay received before it\.$/)]);

    await relayEndpoint.suspend();
    await rm(relayJson(), { recursive: true });
    await marks().write(relay.url, secrets.relayTopic, { lastMessageId: 'AbCdEf123456' });
    await relayEndpoint.open();

    expect(sinceOf(streamRequests()[1])).toBe('AbCdEf123456');
  });
});
