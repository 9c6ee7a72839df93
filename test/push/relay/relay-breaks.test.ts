/**
 * The relay client across breaks, against the project's loopback relay (ntfy protocol): catch-up with
 * `since=` so that nothing published meanwhile is lost, a silent stream dropped, and the fault shown
 * only while the stream has been down too long.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { ReconnectDelays } from '../../../src/push/relay/subscription.js';
import { CATCH_UP_SLACK_S } from '../../../src/push/relay/messages.js';
import { RELAY_TIMING } from '../../../src/push/relay/subscription.js';
import { waitFor } from '../../../scripts/lib/platform-harness.js';
import { connected, fakeTimeouts, lines, relay, subscribe, subscribeRequests, TIMING, useRelay } from './relay-subscription-harness.js';

const sinceOf = (request: { rawQuery: string } | undefined) => new URLSearchParams(request?.rawQuery).get('since');

/**
 * Clocks shared by the relay and the subscription, to be moved on as if time had passed: the wall
 * clock and the monotonic one together.
 */
function movableClock(): { now: () => number; monotonicNow: () => number; offsetMs: number } {
  const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs, monotonicNow: () => performance.now() + clock.offsetMs };
  return clock;
}

describe('breaks', () => {
  it('reopens a dropped stream with since=<last message id> and loses nothing published meanwhile', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe();
    await connected(run);
    relay.publish(run.topic, '{"n":1}', { unifiedPush: true });
    const last = relay.publish(run.topic, '{"n":2}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 2, 'the first messages');

    relay.dropStreams();
    relay.publish(run.topic, '{"n":3}', { unifiedPush: true });
    await waitFor(() => run.bodies.length === 3, 'the message published during the break');

    expect(run.bodies).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(subscribeRequests(run.topic).map((request) => request.rawQuery)).toEqual(['', `since=${last.id}`]);
  });

  it.each([
    ['right', 0],
    ['5 minutes fast', 5 * 60_000],
    ['5 minutes slow', -5 * 60_000],
  ])('asks since the newest relay time seen (less the slack) when no message was handled yet, the host clock %s', async (_name, offsetMs) => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe({ now: () => Date.now() + offsetMs });
    const before = Math.floor(Date.now() / 1000);
    await connected(run);
    const brokeAt = Math.floor(Date.now() / 1000);
    relay.dropStreams();
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the reconnect');

    // The relay's clock is Date.now. A keepalive already on its way may still arrive after the break, into the next second.
    const since = Number(sinceOf(subscribeRequests(run.topic)[1]));
    expect(since).toBeGreaterThanOrEqual(before - CATCH_UP_SLACK_S);
    expect(since).toBeLessThanOrEqual(brokeAt + 1 - CATCH_UP_SLACK_S);
  });

  it('loses nothing published during a break, however far the host clock is off', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const fast = subscribe({ now: () => Date.now() + 5 * 60_000 });
    const slow = subscribe({ now: () => Date.now() - 5 * 60_000 });
    await Promise.all([connected(fast), connected(slow)]);
    // Held off long enough to publish while both streams are down.
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    relay.dropStreams();
    await waitFor(() => subscribeRequests(fast.topic).length === 2 && subscribeRequests(slow.topic).length === 2, 'a refused reconnect');
    relay.publish(fast.topic, '{"during":"the break"}', { unifiedPush: true });
    relay.publish(slow.topic, '{"during":"the break"}', { unifiedPush: true });
    relay.refuseSubscriptions({ status: 503, times: 0 });

    await waitFor(() => fast.bodies.length === 1 && slow.bodies.length === 1, 'the messages published during the break');
    expect([...fast.bodies, ...slow.bodies]).toEqual(['{"during":"the break"}', '{"during":"the break"}']);
  });

  it('after a stream fell silent, asks since it last showed life and shows the fault at once when that was long ago', async () => {
    const clock = movableClock();
    await useRelay({ now: clock.now });
    // The backoff leaves time to end the silence before the stream is reopened.
    const run = subscribe({ ...clock, timing: { faultAfterMs: 2_000, reconnect: { firstMs: 600, factor: 2, maxMs: 600, jitter: true } } });
    await connected(run);

    relay.setSilent(true);
    clock.offsetMs = 30_000;
    relay.publish(run.topic, '{"during":"the silence"}', { unifiedPush: true });
    // Noticed a minute after the last keepalive, as the production watchdog may be: within the stale limit.
    clock.offsetMs = 60_000;
    await waitFor(() => lines(run, 'debug').some((line) => line.startsWith('Push relay: nothing arrived')), 'the silent stream to be dropped');
    relay.setSilent(false);
    await waitFor(() => run.bodies.length === 1, 'the message published during the silence');

    expect(run.bodies).toEqual(['{"during":"the silence"}']);
    expect(subscribeRequests(run.topic)).toHaveLength(2);
    expect(run.down).toEqual([true, false]);
  });

  it('shows the fault when the stream fell silent long enough, even though the wall clock stepped back an hour meanwhile', async () => {
    const wall = movableClock();
    const run = subscribe({ now: wall.now });
    await connected(run);

    relay.setSilent(true);
    wall.offsetMs = -60 * 60_000;
    await waitFor(() => run.down.length === 1, 'the fault', TIMING.aliveMs + 1_000);
    relay.setSilent(false);

    // Silent for the whole alive timeout, longer than the fault delay: the fault comes as the stream is dropped.
    expect(run.down).toEqual([true]);
  });

  it('keeps asking since the first break, however often the stream breaks again before a message arrives', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const clock = movableClock();
    await useRelay({ now: clock.now });
    const run = subscribe({ now: clock.now });
    await connected(run);
    const firstBreak = Math.floor(clock.now() / 1000);
    relay.dropStreams();
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the first reconnect');
    await connected(run);

    clock.offsetMs = 30_000;
    relay.dropStreams();
    await waitFor(() => subscribeRequests(run.topic).length === 3, 'the second reconnect');

    const since = Number(sinceOf(subscribeRequests(run.topic)[2]));
    expect(since).toBeGreaterThanOrEqual(firstBreak - 1 - CATCH_UP_SLACK_S);
    expect(since).toBeLessThanOrEqual(firstBreak + 1 - CATCH_UP_SLACK_S);
  });

  it('keeps a stream whose keepalives arrive well within the alive timeout', async () => {
    // The watchdog runs on a fake clock, moved on only after a keepalive has arrived: a busy machine
    // that stalls past the alive timeout would otherwise fire it between two keepalives.
    fakeTimeouts();
    let clockReads = 0;
    // The subscription reads its monotonic clock as each event arrives.
    const run = subscribe({
      monotonicNow: () => {
        clockReads += 1;
        return jest.now();
      },
    });
    await connected(run);
    for (let keepalive = 0; keepalive < 5; keepalive += 1) {
      const readsBefore = clockReads;
      await waitFor(() => clockReads > readsBefore, 'a keepalive');
      jest.advanceTimersByTime(TIMING.aliveMs - 100);
    }

    expect(subscribeRequests(run.topic)).toHaveLength(1);
    expect(lines(run, 'debug').filter((line) => line.includes('nothing arrived'))).toEqual([]);
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
    // The fault delay runs on a fake clock, moved on once the relay has refused: on a busy machine it
    // could otherwise end before the refusal arrived, and name another reason.
    fakeTimeouts();
    const run = subscribe({ monotonicNow: () => jest.now() });
    await connected(run);
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    relay.dropStreams();
    await waitFor(() => lines(run, 'debug').some((line) => line.startsWith('Push relay: HTTP 503; reconnecting')), 'a refused reconnect');
    expect(run.down).toEqual([]);
    jest.advanceTimersByTime(TIMING.faultAfterMs);

    expect(run.down).toEqual([true]);
    expect(lines(run, 'warn')).toEqual([expect.stringMatching(/^Push relay unreachable for 0 s \(HTTP 503\): motion alerts cannot arrive until it is back/)]);
    relay.refuseSubscriptions({ status: 503, times: 0 });
    await waitFor(() => run.down.length === 2, 'the fault to clear');

    expect(run.down).toEqual([true, false]);
  });

  it('shows no fault for a break shorter than the fault delay', async () => {
    // The break lasts no time on the fake clock, however long the reconnect takes a busy machine;
    // the clock moves past the fault delay only once the stream is back.
    fakeTimeouts();
    const run = subscribe({ monotonicNow: () => jest.now() });
    await connected(run);
    relay.dropStreams();
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the reconnect');
    await connected(run);
    jest.advanceTimersByTime(TIMING.faultAfterMs + 1);

    expect(run.down).toEqual([]);
    expect(lines(run, 'warn')).toEqual([]);
  });
});

const FAILED = { kind: 'failed' } as const;
/** The largest value Math.random can return. */
const ALMOST_ONE = 1 - Number.EPSILON;

const seconds = (ms: number) => Math.round(ms) / 1000;

describe('ReconnectDelays with the production timing', () => {
  it('backs off from 2 s, doubling to 60 s, when the jitter takes nothing off', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    expect(Array.from({ length: 8 }, () => seconds(delays.after(FAILED)))).toEqual([2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it('takes a random 0 to 50 % off each step, so the first wait is 1 to 2 s and none passes its step', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0);
    expect(Array.from({ length: 8 }, () => seconds(delays.after(FAILED)))).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
  });

  it('keeps jittering once the backoff is at 60 s, so homes stay out of step', () => {
    let random = 0;
    const delays = new ReconnectDelays(RELAY_TIMING, () => random);
    Array.from({ length: 10 }, () => delays.after(FAILED));
    const atCap = [0, 0.5, ALMOST_ONE].map((value) => {
      random = value;
      return seconds(delays.after(FAILED));
    });
    expect(atCap).toEqual([30, 45, 60]);
  });

  it('starts over after a stream that lived 60 s, not after a shorter one', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    delays.after(FAILED);
    delays.after(FAILED);
    expect(seconds(delays.after({ kind: 'ended', livedMs: 59_999 }))).toBe(8);
    expect(seconds(delays.after({ kind: 'ended', livedMs: 60_000 }))).toBe(2);
  });

  it('honours Retry-After on 429 and 503, up to 10 minutes', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    expect(delays.after({ kind: 'refused', status: 429, retryAfterMs: 30_000 })).toBe(30_000);
    expect(delays.after({ kind: 'refused', status: 503, retryAfterMs: 86_400_000 })).toBe(600_000);
    expect(seconds(delays.after({ kind: 'refused', status: 503, retryAfterMs: undefined }))).toBe(8);
  });

  it('never waits less than the backoff for a Retry-After of 0 (or a date past), and counts it as a failure', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => ALMOST_ONE);
    const waits = Array.from({ length: 4 }, () => seconds(delays.after({ kind: 'refused', status: 429, retryAfterMs: 0 })));
    expect(waits).toEqual([2, 4, 8, 16]);
    expect(seconds(delays.after({ kind: 'refused', status: 503, retryAfterMs: 5_000 }))).toBe(32);
  });

  it('waits 10 minutes after the relay refused access', () => {
    const delays = new ReconnectDelays(RELAY_TIMING, () => 0.5);
    expect(delays.after({ kind: 'refused', status: 401, retryAfterMs: undefined })).toBe(600_000);
    expect(delays.after({ kind: 'refused', status: 403, retryAfterMs: 5_000 })).toBe(600_000);
  });
});
