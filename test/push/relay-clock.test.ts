/**
 * The relay client judges a message's age by the relay's clock (the newest `time` on the stream), never
 * by this machine's, against the project's loopback relay (ntfy protocol): a host clock minutes off
 * drops no fresh alert and gets one warning.
 */
import { describe, expect, it } from '@jest/globals';
import { delay } from '../support/platform-harness.js';
import { connected, lines, relay, subscribe, useRelay, waitFor } from './relay-subscription-harness.js';

const MINUTES = 60_000;

const messageLine = (id: string, time: number, message: string) => JSON.stringify({ id, time, event: 'message', topic: 't', message });

const clockWarnings = (run: Parameters<typeof lines>[0]) => lines(run, 'warn').filter((line) => line.startsWith("This machine's clock"));

describe("the relay's clock", () => {
  it.each([
    ['fast', 5 * MINUTES, '5 minutes ahead of'],
    ['slow', -5 * MINUTES, '5 minutes behind'],
  ])('hands over a fresh message when the host clock is 5 minutes %s, and warns once', async (_name, offsetMs, words) => {
    const run = subscribe({ now: () => Date.now() + offsetMs });
    await connected(run);

    relay.publish(run.topic, '{"device_id":1,"kind":"motion"}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 1, 'the message');
    // Keepalives (every 100 ms) and a reconnect bring the relay's time again and again.
    relay.dropStreams();
    await delay(400);
    relay.publish(run.topic, '{"device_id":1,"kind":"ding"}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 2, 'the message after the reconnect');

    expect(run.subscription.counts.stale).toBe(0);
    expect(clockWarnings(run)).toEqual([
      `This machine's clock is ${words} the push relay's (${relay.url}): alerts are timed by the relay's clock, so none is lost, but the system clock should be set right (NTP).`,
    ]);
  });

  it("drops a message more than 120 s older than the relay's clock, though the host clock is slower still", async () => {
    const run = subscribe({ now: () => Date.now() - 5 * MINUTES });
    await connected(run);
    const relayNow = Math.floor(Date.now() / 1000);

    relay.injectLine(run.topic, messageLine('old', relayNow - 125, '{"stale":1}'));
    relay.injectLine(run.topic, messageLine('recent', relayNow - 100, '{"recent":1}'));
    await waitFor(() => run.bodies.length === 1, 'the recent message');

    expect(run.bodies).toEqual(['{"recent":1}']);
    expect(run.subscription.counts.stale).toBe(1);
    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: dropped a message 12\d s old$/));
  });

  it('takes the newest time of any event on the stream as the clock, a message included', async () => {
    const run = subscribe();
    await connected(run);
    const relayNow = Math.floor(Date.now() / 1000);

    // A message stamped 10 minutes ahead moves the clock on: one 5 minutes older than it is stale.
    relay.injectLine(run.topic, messageLine('ahead', relayNow + 600, '{"ahead":1}'));
    relay.injectLine(run.topic, messageLine('behind', relayNow + 300, '{"behind":1}'));
    relay.injectLine(run.topic, messageLine('newest', relayNow + 590, '{"newest":1}'));
    await waitFor(() => run.bodies.length === 2, 'two messages');

    expect(run.bodies).toEqual(['{"ahead":1}', '{"newest":1}']);
    expect(run.subscription.counts.stale).toBe(1);
  });

  it("judges what a relay whose clock is 10 minutes behind sends by that clock, and says the host's is ahead", async () => {
    await useRelay({ keepaliveMs: 100, now: () => Date.now() - 10 * MINUTES });
    const run = subscribe();
    await connected(run);

    relay.publish(run.topic, '{"device_id":1,"kind":"motion"}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 1, 'the message');

    expect(clockWarnings(run)).toEqual([expect.stringContaining('10 minutes ahead of')]);
  });

  it('says nothing about clocks that differ by less than a minute', async () => {
    const run = subscribe({ now: () => Date.now() + 50_000 });
    await connected(run);
    relay.publish(run.topic, '{"device_id":1,"kind":"motion"}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 1, 'the message');
    await delay(300);

    expect(lines(run, 'warn')).toEqual([]);
  });
});
