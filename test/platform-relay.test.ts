/**
 * The platform in relay mode, the default without a public address, against the simulator and the
 * loopback relay (ntfy protocol): the stream opens before the registration, which goes ahead as soon as
 * the stream is up, motion arrives through it whatever the host clock says, a break shows as a fault
 * only when long, an address that answers but is no relay is said and never registered, and the topic
 * never reaches the log. Direct mode's start-up warnings, which name
 * relay mode as the fix, are here too.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA_FILES, dataFolderPath } from '../src/storage/data-folder.js';
import { sendTestMotion } from '../homebridge-ui/test-motion.js';
import { DOORBELLS, FAST, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed, useLoopbackRelay } from './support/platform-testbed.js';
import { pollUntil } from '../scripts/lib/poll.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);

/** How many relay streams had opened when the doorbell service answered the push registration. */
let streamsAtRegistration: number | undefined;

const testbed = usePlatformTestbed(undefined, {
  onSimulatorRequest: (request) => {
    if (request.route === 'register') {
      streamsAtRegistration ??= openedStreams();
    }
  },
});

/** A relay for every test, closed after its platforms have stopped; the direct-mode tests leave it idle. */
const relay = useLoopbackRelay();

const openedStreams = () => relay().requests.filter((request) => request.method === 'GET' && request.status === 200).length;

describe('relay mode', () => {
  beforeEach(() => {
    streamsAtRegistration = undefined;
  });

  function launchWithRelay(): RunningPlatform {
    return testbed.launch({ relayUrl: relay().url });
  }

  const topicOf = (pushToken: string | undefined) => new URL(pushToken ?? 'http://x/').pathname.slice(1);

  it('opens the relay stream before registering <relay>/<topic>?up=1, then turns a delivered motion into MotionDetected', async () => {
    // The stream opens late, so a registration sent without waiting for it would come first.
    relay().refuseSubscriptions({ status: 503, times: 2 });
    const platform = launchWithRelay();
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    expect(testbed.sim.pushToken).toMatch(new RegExp(`^${relay().url}/up[A-Za-z0-9_-]{12}\\?up=1$`));
    expect(streamsAtRegistration).toBe(1);
    expect(relay().requests.map((request) => request.status)).toEqual([503, 503, 200]);
    expect(logged(platform, `push relay connected: ${relay().url}`)).toBe(true);
    expect(logged(platform, 'Push receiver listening')).toBe(false);

    expect((await testbed.sim.deliverMotion(BACK)).status).toBe(200);
    await waitFor(() => sensorValue(platform.test, BACK, 'MotionDetected') === true, 'the motion');
    expect(logged(platform, 'Motion at Back Door')).toBe(true);
  });

  it('keeps the same topic across a restart, so the registered address stays the same', async () => {
    const first = launchWithRelay();
    await waitFor(() => allConfirmed(first), 'first subscriptions');
    const pushToken = testbed.sim.pushToken;
    await testbed.stop(first);
    await waitFor(() => relay().subscriberCount(topicOf(pushToken)) === 0, 'the stream to close on shutdown');

    const second = launchWithRelay();
    await waitFor(() => allConfirmed(second), 'second subscriptions');
    expect(testbed.sim.pushToken).toBe(pushToken);
  });

  it('delivers a ring sent to the relay while Homebridge restarted, and not the one before it again', async () => {
    const rang = (platform: RunningPlatform, name: string) => platform.log.lines.filter(({ message }) => message === `Doorbell rang at ${name}`).length;
    const first = launchWithRelay();
    await waitFor(() => allConfirmed(first), 'first subscriptions');
    await testbed.sim.deliverMotion(FRONT, { kind: 'ding', id: 'before-the-restart' });
    await waitFor(() => rang(first, 'Front Door') === 1, 'the first ring');
    const topic = topicOf(testbed.sim.pushToken);
    const [handled] = relay().messages(topic);
    const relayJson = join(dataFolderPath(testbed.storagePath), DATA_FILES.relay);
    await pollUntil(() => readFile(relayJson, 'utf8').catch(() => ''), (text) => text.includes(handled.id), 3_000, 'relay.json to hold the ring', 20);
    await testbed.stop(first);
    await waitFor(() => relay().subscriberCount(topic) === 0, 'the stream to close on shutdown');

    expect((await testbed.sim.deliverMotion(BACK, { kind: 'ding', id: 'during-the-restart' })).status).toBe(200);
    const second = launchWithRelay();
    await waitFor(() => rang(second, 'Back Door') === 1, 'the ring sent during the restart');
    await waitFor(() => allConfirmed(second), 'second subscriptions');

    expect(rang(second, 'Front Door')).toBe(0);
    expect(relay().requests.filter((request) => request.method === 'GET').at(-1)?.rawQuery).toBe(`since=${handled.id}`);
  });

  it('faults every doorbell while the stream has been down too long, and clears the faults when it is back', async () => {
    const platform = launchWithRelay();
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    relay().refuseSubscriptions({ status: 503, times: 1_000 });
    relay().dropStreams();
    await waitFor(() => DOORBELLS.every(({ deviceId }) => sensorValue(platform.test, deviceId, 'StatusFault') === 1), 'the faults');
    relay().refuseSubscriptions({ status: 503, times: 0 });
    await waitFor(() => allConfirmed(platform), 'the faults to clear');
  });

  it('takes a relayUrl that answers 200 with a web page for no relay: one warning, the fault after faultAfterMs, nothing registered, until a real relay answers', async () => {
    relay().impersonate('web-page');
    const started = performance.now();
    const platform = launchWithRelay();
    const warnings = (text: string) => platform.log.lines.filter((line) => line.level === 'warn' && line.message.includes(text));

    await waitFor(() => warnings('Push relay unreachable').length === 1, 'the relay fault');
    expect(performance.now() - started).toBeGreaterThanOrEqual(FAST.relay.faultAfterMs);
    await waitFor(() => openedStreams() >= 5, 'more answers from the page');
    expect(DOORBELLS.every(({ deviceId }) => sensorValue(platform.test, deviceId, 'StatusFault') === 1)).toBe(true);
    expect(warnings('not as an ntfy relay (')).toEqual([
      expect.objectContaining({ message: expect.stringMatching(new RegExp(`^push\\.relayUrl ${relay().url} answered, but not as an ntfy relay \\(`)) }),
    ]);
    // The reason the fault names is the page's only when the page answered within faultAfterMs, which a
    // busy machine may not do: test/push/relay/relay-subscription.test.ts checks it on a fake clock.
    expect(warnings('Push relay unreachable')).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^Push relay unreachable for \d+ s \((answered, but not as an ntfy relay|not connected yet)\)/) }),
    ]);
    expect(logged(platform, 'push relay connected')).toBe(false);
    expect(testbed.sim.requestsTo('register')).toEqual([]);

    relay().impersonate(undefined);
    await waitFor(() => allConfirmed(platform), 'subscriptions once a real relay answers', 5_000);
    expect(testbed.sim.pushToken).toMatch(new RegExp(`^${relay().url}/up[A-Za-z0-9_-]{12}\\?up=1$`));
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
  });

  it('turns a test motion through the relay into MotionDetected with the host clock 5 minutes fast, saying so once', async () => {
    const platform = testbed.launch({ relayUrl: relay().url, timing: { ...FAST, now: () => Date.now() + 5 * 60_000 } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    const address = { token: testbed.sim.pushToken!, answeredBy: 'push relay' as const, setting: 'Relay Server' as const };
    expect(await sendTestMotion(address, FRONT, { signedIn: async () => true })).toBe(200);

    await waitFor(() => sensorValue(platform.test, FRONT, 'MotionDetected') === true, 'the motion');
    expect(platform.log.lines.filter((line) => line.message.startsWith("This machine's clock is 5 minutes ahead of the push relay's"))).toHaveLength(1);
  });

  it('registers as soon as a late stream opens, rather than at the next retry', async () => {
    // The next retry is a minute away (the jitter at the top of its range): only the stream's opening can start the registration in time.
    const retry = { ...FAST.schedule.retry, firstMs: 60_000, maxMs: 60_000 };
    const timing = { ...FAST, schedule: { ...FAST.schedule, retry, random: () => 1 }, relayConnectWaitMs: 300 };
    relay().refuseSubscriptions({ status: 503, times: 1_000 });
    const platform = testbed.launch({ relayUrl: relay().url, timing });
    await waitFor(() => logged(platform, 'did not open a stream within 0.3 s. Trying again as soon as it opens, at the latest in 1 minute.'), 'the failed attempt');

    relay().refuseSubscriptions({ status: 503, times: 0 });

    await waitFor(() => allConfirmed(platform), 'subscriptions', 3_000);
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
    expect(testbed.sim.requestsTo('login')).toHaveLength(1);
  });

  it('never logs the topic, at any level', async () => {
    const platform = launchWithRelay();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    await testbed.sim.deliverMotion(FRONT);
    relay().dropStreams();
    await waitFor(() => relay().subscriberCount(topicOf(testbed.sim.pushToken)) === 1, 'the reconnect');

    const topic = topicOf(testbed.sim.pushToken);
    expect(testbed.sim.secrets).toContain(topic);
    expect(platform.log.lines.filter((line) => line.message.includes(topic))).toEqual([]);
  });
});


describe('start-up warnings about the push address', () => {
  const warnings = (platform: RunningPlatform) => platform.log.lines.filter((line) => line.level === 'warn').map((line) => line.message);
  const directBlock = (publicUrl: string) => ({ push: { mode: 'direct', host: '127.0.0.1', port: testbed.pushPort, publicUrl } });

  it('warns in direct mode that a cloud cannot reach a local publicUrl, naming relay mode', () => {
    const platform = testbed.launch({ overrides: directBlock('http://192.168.1.20:47850') });

    expect(warnings(platform)).toContainEqual(
      expect.stringMatching(/^push\.publicUrl http:\/\/192\.168\.1\.20:47850 is a local address that a cloud service cannot reach.*relay mode/),
    );
  });

  it('warns in direct mode that a public http publicUrl sends every delivery unencrypted', () => {
    const platform = testbed.launch({ overrides: directBlock('http://203.0.113.7:47850') });

    expect(warnings(platform)).toContainEqual(expect.stringMatching(/^push\.publicUrl http:\/\/203\.0\.113\.7:47850 is plain http: .*unencrypted/));
  });

  it('warns about neither in relay mode', async () => {
    const platform = testbed.launch({ relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    expect(warnings(platform).filter((line) => line.startsWith('push.publicUrl'))).toEqual([]);
  });
});
