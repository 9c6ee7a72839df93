/**
 * The relay client judges a message's age by the relay's clock (the newest `time` on the stream) and
 * by this machine's, against the project's loopback relay (ntfy protocol): only a message old by both
 * is stale, so a host clock minutes off drops no fresh alert (one warning), nor does a relay clock that
 * jumped ahead, which steps back with its next keepalive (one warning per stream).
 */
import { describe, expect, it } from '@jest/globals';
import { delay, waitFor } from '../../../scripts/lib/platform-harness.js';
import { connected, fakeTimeouts, lines, relay, subscribe, subscribeRequests, useRelay } from './relay-subscription-harness.js';

const MINUTES = 60_000;

const messageLine = (id: string, time: number, message: string) => JSON.stringify({ id, time, event: 'message', topic: 't', message });
const keepaliveLine = (time: number) => JSON.stringify({ id: 'k', time, event: 'keepalive', topic: 't' });
const sinceOf = (request: { rawQuery: string } | undefined) => new URLSearchParams(request?.rawQuery).get('since');

const clockWarnings = (run: Parameters<typeof lines>[0]) => lines(run, 'warn').filter((line) => line.startsWith("This machine's clock"));
const stepBackWarnings = (run: Parameters<typeof lines>[0]) => lines(run, 'warn').filter((line) => line.startsWith("The push relay's clock"));

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

    expect(run.stale).toEqual([]);
    expect(clockWarnings(run)).toEqual([
      `This machine's clock is ${words} the push relay's (${relay.url}): alerts are timed by the relay's clock, so none is lost, but the system clock should be set right (NTP).`,
    ]);
  });

  it("drops a message more than 120 s older than the relay's clock and the host's, and a catch-up from half an hour ago", async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe({ now: () => Date.now() + 5 * MINUTES });
    await connected(run);
    const relayNow = Math.floor(Date.now() / 1000);

    relay.injectLine(run.topic, messageLine('old', relayNow - 125, '{"stale":1}'));
    relay.injectLine(run.topic, messageLine('catch-up', relayNow - 30 * 60, '{"stale":2}'));
    // Old by the host clock only, which is 5 minutes fast: fresh.
    relay.injectLine(run.topic, messageLine('recent', relayNow - 100, '{"recent":1}'));
    await waitFor(() => run.bodies.length === 1, 'the recent message');

    expect(run.bodies).toEqual(['{"recent":1}']);
    expect(run.stale).toHaveLength(2);
    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: dropped a message 12\d s old$/));
    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: dropped a message 180\d s old$/));
  });

  it("hands over a message more than 120 s older than the relay's clock while the host's says it is fresh", async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe({ now: () => Date.now() - 5 * MINUTES });
    await connected(run);
    const relayNow = Math.floor(Date.now() / 1000);

    relay.injectLine(run.topic, messageLine('old-by-the-relay', relayNow - 125, '{"fresh":1}'));
    await waitFor(() => run.bodies.length === 1, 'the message');

    expect(run.stale).toEqual([]);
  });

  it('hands over every message stamped now after a keepalive stamped an hour ahead', async () => {
    const run = subscribe();
    await connected(run);

    // Written at once, in this order: no keepalive of the relay's own comes between.
    relay.injectLine(run.topic, keepaliveLine(Math.floor(Date.now() / 1000) + 60 * 60));
    for (const kind of ['motion', 'ding', 'motion']) {
      relay.publish(run.topic, `{"device_id":1,"kind":"${kind}"}`, { unifiedPush: true });
    }
    await waitFor(() => run.bodies.length === 3, 'the three messages');

    expect(run.stale).toEqual([]);
  });

  it("restarts the stream's clock from a keepalive over 60 s older than the newest, warning once per stream, and catches up from there", async () => {
    const run = subscribe();
    await connected(run);
    const aheadBy = (seconds: number) => keepaliveLine(Math.floor(Date.now() / 1000) + seconds);

    relay.injectLine(run.topic, aheadBy(60 * 60));
    await waitFor(() => stepBackWarnings(run).length === 1, "the relay's next keepalive to step the clock back");
    relay.injectLine(run.topic, aheadBy(60 * 60));
    // Keepalives come every 100 ms: several step the clock back again, without another warning.
    await delay(300);
    expect(stepBackWarnings(run)).toEqual([`The push relay's clock (${relay.url}) went back 60 minutes: alerts are timed from its new time.`]);

    relay.dropStreams();
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the reconnect');
    // Since the relay's true time, not the hour ahead it once showed: nothing published meanwhile is skipped.
    expect(Number(sinceOf(subscribeRequests(run.topic)[1]))).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

    await connected(run);
    relay.injectLine(run.topic, aheadBy(10 * 60));
    await waitFor(() => stepBackWarnings(run).length === 2, 'the warning on the new stream');
    expect(stepBackWarnings(run)[1]).toContain('went back 10 minutes');
  });

  it('takes the newest time of any event on the stream as the clock, a message included', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    // The host clock is 10 minutes fast too, so that only the relay's clock can keep a message fresh.
    const run = subscribe({ now: () => Date.now() + 10 * MINUTES });
    await connected(run);
    const relayNow = Math.floor(Date.now() / 1000);

    // A message stamped 10 minutes ahead moves the clock on: one 5 minutes older than it is stale.
    relay.injectLine(run.topic, messageLine('ahead', relayNow + 600, '{"ahead":1}'));
    relay.injectLine(run.topic, messageLine('behind', relayNow + 300, '{"behind":1}'));
    relay.injectLine(run.topic, messageLine('newest', relayNow + 590, '{"newest":1}'));
    await waitFor(() => run.bodies.length === 2, 'two messages');

    expect(run.bodies).toEqual(['{"ahead":1}', '{"newest":1}']);
    expect(run.stale).toHaveLength(1);
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
