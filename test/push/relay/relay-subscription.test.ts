/**
 * The relay client against the project's loopback relay (ntfy protocol) over real HTTP, with its
 * timings shortened: the stream, its lines, refusals and stop. Breaks are in relay-breaks.test.ts.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { listen } from '../../../simulator/servers.js';
import { waitFor } from '../../../scripts/lib/platform-harness.js';
import { connected, fakeTimeouts, lines, relay, subscribe, subscribeRequests, TIMING, useRelay } from './relay-subscription-harness.js';

const messageLine = (fields: Record<string, unknown>) => JSON.stringify({ event: 'message', topic: 't', ...fields });

describe('the stream', () => {
  it('subscribes to <relay>/<topic>/json without since, uncompressed, and says it is connected, without the topic', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe();
    await connected(run);

    expect(subscribeRequests(run.topic).map((request) => request.rawQuery)).toEqual(['']);
    expect(subscribeRequests(run.topic)[0]?.headers.authorization).toBeUndefined();
    expect(subscribeRequests(run.topic)[0]?.headers['accept-encoding']).toBe('identity');
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

  it('ignores open, keepalive and unknown events, logs bad lines and hands over bad notifications, without ending the stream', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe();
    await connected(run);
    const now = Math.floor(Date.now() / 1000);
    for (const line of [
      'not json',
      '[1,2]',
      `{"event":"keepalive","id":"k","time":${now}}`,
      '{"event":"poll_request","id":"p","time":1,"message":"New message"}',
      messageLine({ time: now, message: 'no id' }),
      messageLine({ id: 'bad1', time: now, message: 'not a notification' }),
      'x'.repeat(70 * 1024),
    ]) {
      relay.injectLine(run.topic, line);
    }
    relay.publish(run.topic, '{"device_id":1,"kind":"motion"}', { unifiedPush: true });
    await waitFor(() => run.bodies.includes('{"device_id":1,"kind":"motion"}'), 'the good message');

    expect(run.bodies).toEqual(['not a notification', '{"device_id":1,"kind":"motion"}']);
    expect(lines(run, 'debug').filter((line) => line.startsWith('Push relay: ignored a line'))).toHaveLength(4);
    expect(subscribeRequests(run.topic)).toHaveLength(1);
    expect([...lines(run, 'warn'), ...lines(run, 'error')]).toEqual([]);
  });

  it('drops a message seen before (same relay id), and a stale one, logging the stale one at debug', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
    const run = subscribe();
    await connected(run);
    const now = Math.floor(Date.now() / 1000);
    relay.injectLine(run.topic, messageLine({ id: 'same', time: now, message: '{"first":1}' }));
    relay.injectLine(run.topic, messageLine({ id: 'same', time: now, message: '{"first":1}' }));
    relay.injectLine(run.topic, messageLine({ id: 'old', time: now - 121, message: '{"stale":1}' }));
    relay.injectLine(run.topic, messageLine({ id: 'last', time: now - 100, message: '{"last":1}' }));
    await waitFor(() => run.bodies.length === 2, 'two messages');

    expect(run.bodies).toEqual(['{"first":1}', '{"last":1}']);
    expect(run.stale).toHaveLength(1);
    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: dropped a message 12\d s old$/));
  });
});

describe('an address that answers, but not as an ntfy relay', () => {
  const notARelay = (run: Parameters<typeof lines>[0]) => lines(run, 'warn').filter((line) => line.includes('answered, but not as an ntfy relay ('));

  it('never counts a 200 web page as connected: one warning naming push.relayUrl, the fault after faultAfterMs, again only after a real relay', async () => {
    // The fault delay runs on a fake clock, moved on only once the attempts have been answered: on a
    // busy machine the fault could otherwise come before the first answer, and name no reason yet.
    fakeTimeouts();
    relay.impersonate('web-page');
    const run = subscribe({ monotonicNow: () => jest.now() });
    await waitFor(() => subscribeRequests(run.topic).length >= 4, 'more attempts');
    expect(run.down).toEqual([]);
    jest.advanceTimersByTime(TIMING.faultAfterMs);

    const waiting = run.subscription.whenConnected(10);
    jest.advanceTimersByTime(10);
    expect(await waiting).toBe(false);
    expect(run.down).toEqual([true]);
    expect(lines(run, 'info')).toEqual([]);
    expect(notARelay(run)).toEqual([
      `push.relayUrl ${relay.url} answered, but not as an ntfy relay (a web page, a captive portal or a proxy's error page?): motion alerts cannot arrive through it. Check push.relayUrl; still trying.`,
    ]);
    expect(lines(run, 'warn')).toContainEqual(expect.stringMatching(/^Push relay unreachable for 0 s \(answered, but not as an ntfy relay\)/));

    relay.impersonate(undefined);
    await connected(run);
    expect(run.down).toEqual([true, false]);
    relay.impersonate('web-page');
    relay.dropStreams();
    await waitFor(() => notARelay(run).length === 2, 'the warning again, after a real relay answered');
  });

  it('says a server that answers 200 and ends at once, with no byte, is no relay, and counts the attempts as failed', async () => {
    // ntfy's answer always begins with its `open` event: an empty one is some other server's.
    const empty = await listen('127.0.0.1', 0, (_request, response) => response.writeHead(200, { 'Content-Type': 'application/json' }).end());
    try {
      const run = subscribe({ relayUrl: empty.url });
      await waitFor(() => run.down.length === 1, 'the fault');
      await waitFor(() => lines(run, 'debug').length >= 3, 'more attempts');
      await run.subscription.stop();

      expect(notARelay(run)).toHaveLength(1);
      expect(run.down).toEqual([true]);
      expect(lines(run, 'info')).toEqual([]);
      expect(lines(run, 'debug')).not.toContainEqual(expect.stringContaining('the relay ended the stream'));
    } finally {
      await empty.close();
    }
  });

  it('drops a server that trickles bytes but no event once the alive timeout has passed, and says it is no relay', async () => {
    // The watchdog runs on a fake clock, moved on once the answer has arrived: on a busy machine it
    // could otherwise fire before the first byte did. That byte is written with the headers, in the
    // same turn of this process, so it arrives with them.
    fakeTimeouts();
    relay.impersonate('trickle');
    let clockReads = 0;
    const run = subscribe({
      monotonicNow: () => {
        clockReads += 1;
        return jest.now();
      },
    });
    // Read once as it starts, and again as the answer opens.
    await waitFor(() => clockReads >= 2, 'the answer');
    jest.advanceTimersByTime(TIMING.aliveMs - 1);
    expect(notARelay(run)).toEqual([]);
    jest.advanceTimersByTime(1);
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the second attempt');

    expect(notARelay(run)).toHaveLength(1);
    expect(run.down).toEqual([true]);
    expect(lines(run, 'info')).toEqual([]);
  });

  it('drops a stream that sends only lines that are no event, however often, once the alive timeout has passed', async () => {
    // Keepalives too rare to keep it: only the injected lines could. The watchdog runs on a fake
    // clock, moved on only once each batch of lines has been read, so a busy machine cannot let the
    // alive timeout pass with fewer lines than the test sends.
    fakeTimeouts();
    await useRelay({ keepaliveMs: 60_000 });
    const run = subscribe();
    await connected(run);
    for (let batch = 1; batch <= 4; batch += 1) {
      relay.injectLine(run.topic, '<p>not an event</p>');
      relay.injectLine(run.topic, '<p>not an event</p>');
      await waitFor(() => lines(run, 'debug').filter((line) => line.startsWith('Push relay: ignored a line')).length === 2 * batch, 'the lines read');
      jest.advanceTimersByTime(TIMING.aliveMs / 4);
    }
    await waitFor(() => subscribeRequests(run.topic).length === 2, 'the reopened stream');

    expect(lines(run, 'debug')).toContainEqual(expect.stringMatching(/^Push relay: nothing arrived for 0 s; reconnecting/));
    expect(lines(run, 'debug').filter((line) => line.startsWith('Push relay: ignored a line')).length).toBeGreaterThan(5);
    // It had shown itself a relay: a relay that goes wrong is not an impostor.
    expect(notARelay(run)).toEqual([]);
  });
});

describe('refusals', () => {
  it('still backs off after Retry-After: 0, instead of asking again at once', async () => {
    relay.refuseSubscriptions({ status: 429, retryAfter: '0', times: 1_000 });
    const started = performance.now();
    const run = subscribe();
    await waitFor(() => subscribeRequests(run.topic).length >= 4, 'four attempts');
    const elapsedMs = performance.now() - started;
    relay.refuseSubscriptions({ status: 429, times: 0 });

    // At least 10, 20, then 40 ms between the attempts (half of each 20, 40, 80 ms step, the jitter
    // taking off the rest): four attempts take 70 ms at the very least, however fast the machine.
    // Asking again at once would make them in a few.
    expect(elapsedMs).toBeGreaterThanOrEqual(70);
  });

  it('honours Retry-After on 429', async () => {
    // No watchdog fires on a fake clock that stands still: a busy machine cannot drop the stream between the steps.
    fakeTimeouts();
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
    // The fault delay is shorter than the refused-access wait: its own warning may come first on a busy machine.
    expect(lines(run, 'warn').filter((line) => line.startsWith('Push relay refused access'))[0]).toBe(
      'Push relay refused access (HTTP 401): check push.relayToken. Trying again in 1 s.',
    );
    expect(run.log.lines.some(({ message }) => message.includes('tk_wrongtoken'))).toBe(false);
  });
});

describe('waiting for the stream', () => {
  it('ends each wait that timed out with false, however many pile up while the relay refuses, and a later one with true once it opens', async () => {
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    const run = subscribe();
    const waits = Array.from({ length: 50 }, (_, index) => run.subscription.whenConnected(10 + (index % 5) * 10));

    await expect(Promise.all(waits)).resolves.toEqual(waits.map(() => false));
    for (let attempt = 0; attempt < 20; attempt += 1) {
      await expect(run.subscription.whenConnected(5)).resolves.toBe(false);
    }

    relay.refuseSubscriptions({ status: 503, times: 0 });
    await expect(run.subscription.whenConnected(3_000)).resolves.toBe(true);
  });
});

describe('stop', () => {
  it('closes the stream and leaves nothing running; a wait begun after it ends at once', async () => {
    // The wait's own timeout runs on a fake clock that stands still: it can only end without one.
    fakeTimeouts();
    const run = subscribe();
    await connected(run);

    await run.subscription.stop();

    await waitFor(() => relay.subscriberCount(run.topic) === 0, 'the relay to see the stream end');
    await expect(run.subscription.whenConnected(5_000)).resolves.toBe(false);
  });

  it('ends a wait for the stream when it stops', async () => {
    // The wait's own timeout runs on a fake clock that stands still: only the stop can end it.
    fakeTimeouts();
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    const run = subscribe();
    const waiting = run.subscription.whenConnected(5_000);

    await run.subscription.stop();

    await expect(waiting).resolves.toBe(false);
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });

  it('stops while reconnecting, without another attempt and without reporting the stream down later', async () => {
    // The fault delay runs on a fake clock, moved on only after the stop; the wait before the next
    // attempt is long enough that no busy machine reaches its end before the stop, which must cut it
    // short for stop() to resolve.
    fakeTimeouts();
    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    const run = subscribe({ monotonicNow: () => jest.now(), timing: { reconnect: { firstMs: 60_000, factor: 2, maxMs: 60_000, jitter: true } } });
    await waitFor(() => lines(run, 'debug').some((line) => line.startsWith('Push relay: HTTP 503; reconnecting')), 'the first attempt refused');

    await run.subscription.stop();
    jest.advanceTimersByTime(TIMING.faultAfterMs * 10);

    expect(subscribeRequests(run.topic)).toHaveLength(1);
    expect(run.down).toEqual([]);
    expect(lines(run, 'warn')).toEqual([]);
    relay.refuseSubscriptions({ status: 503, times: 0 });
  });
});
