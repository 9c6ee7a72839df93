/**
 * A smoke test of the loopback push relay over real HTTP: the JSON stream and a UnifiedPush publish as
 * the plugin and the doorbell service use them, the catch-up after a break, tokens, each fault tests
 * inject, a restart that keeps the cache, and a close that leaves nothing behind. The relay client's
 * own tests (test/push/relay-*.test.ts) cover the rest through the plugin's code.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay, RelayOptions } from '../../simulator/relay/index.js';
import { heldResources, untilReleased } from '../support/held-resources.js';
import { pollUntil } from '../../scripts/lib/poll.js';

const START_MS = Date.parse('2025-06-01T12:00:00Z');
const START_S = START_MS / 1000;
const ID = /^[A-Za-z0-9]{12}$/;
const TOPIC = 'upAbc-_0123456';
const clock = { ms: START_MS };
const relays: Relay[] = [];

async function start(options: RelayOptions = {}): Promise<Relay> {
  clock.ms = START_MS;
  const relay = await startRelay({ now: () => clock.ms, ...options });
  relays.push(relay);
  return relay;
}

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
});

/** A streamed answer's lines as they arrive, and how it ended: 'end' properly, 'error' when the connection broke. */
interface Lines {
  response: Response;
  lines: string[];
  partial: string;
  ended?: 'end' | 'error';
}

async function subscribe(relay: Relay, query = '', headers: Record<string, string> = {}): Promise<Lines> {
  const response = await fetch(`${relay.url}/${TOPIC}/json${query}`, { headers });
  const read: Lines = { response, lines: [], partial: '' };
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        const complete = (read.partial + decoder.decode(chunk, { stream: true })).split('\n');
        read.partial = complete.pop()!;
        read.lines.push(...complete);
      }
      read.ended = 'end';
    } catch {
      read.ended = 'error';
    }
  })();
  return read;
}

const waitFor = (condition: () => boolean, what: string) => pollUntil(condition, (held) => held, 2_000, what, 5);

async function line(read: Lines, index: number): Promise<Record<string, unknown>> {
  await waitFor(() => read.lines.length > index, `line ${index}`);
  return JSON.parse(read.lines[index]) as Record<string, unknown>;
}

/** The lines of one event, once there are at least `count`. */
async function events(read: Lines, event: string, count: number): Promise<Array<Record<string, unknown>>> {
  const matching = () => read.lines.map((text) => JSON.parse(text) as Record<string, unknown>).filter((parsed) => parsed.event === event);
  await waitFor(() => matching().length >= count, `${count} ${event} lines`);
  return matching();
}

const publish = (relay: Relay, body: string | Uint8Array, topic = TOPIC) => fetch(`${relay.url}/${topic}?up=1`, { method: 'POST', body });

describe('the loopback relay', () => {
  it('streams open, published and keepalive lines as ntfy writes them, and answers a publish with the message', async () => {
    const relay = await start({ keepaliveMs: 50 });
    const stream = await subscribe(relay);

    expect(stream.response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(await line(stream, 0)).toEqual({ id: expect.stringMatching(ID), time: START_S, event: 'open', topic: TOPIC });
    const answer = await publish(relay, '{"device_id":1,"kind":"motion"}');
    const binary = await publish(relay, new Uint8Array([0x7b, 0xff, 0x7d]));
    clock.ms += 5_000;

    const message = (await answer.json()) as Record<string, unknown>;
    expect(answer.status).toBe(200);
    expect(Object.keys(message)).toEqual(['id', 'time', 'expires', 'event', 'topic', 'message']);
    expect(message).toMatchObject({ id: expect.stringMatching(ID), time: START_S, event: 'message', topic: TOPIC, message: '{"device_id":1,"kind":"motion"}' });
    expect(await binary.json()).toMatchObject({ message: 'e/99', encoding: 'base64' });
    expect(await events(stream, 'message', 2)).toEqual([message, expect.objectContaining({ message: 'e/99', encoding: 'base64' })]);
    await pollUntil(() => events(stream, 'keepalive', 1), (keepalives) => keepalives.some(({ time }) => time === START_S + 5), 2_000, 'a keepalive', 5);
    expect((await events(stream, 'keepalive', 1)).at(-1)).toEqual({ id: expect.stringMatching(ID), time: START_S + 5, event: 'keepalive', topic: TOPIC });
    expect(relay.messages(TOPIC).map(({ message: text }) => text)).toEqual(['{"device_id":1,"kind":"motion"}', 'e/99']);
    expect(relay.requests.map(({ method, path, rawQuery, status }) => [method, path, rawQuery, status])).toEqual([
      ['GET', `/${TOPIC}/json`, '', 200],
      ['POST', `/${TOPIC}`, 'up=1', 200],
      ['POST', `/${TOPIC}`, 'up=1', 200],
    ]);
  });

  it('answers 507 to a UnifiedPush publish before any subscriber, and keeps caching through a cut for the catch-up by id or time', async () => {
    const relay = await start();
    const refused = await publish(relay, 'early');
    expect(refused.status).toBe(507);
    expect(await refused.json()).toEqual({ code: 50701, http: 507, error: 'cannot publish to UnifiedPush topic without previously active subscriber' });
    expect(() => relay.publish(TOPIC, 'early', { unifiedPush: true })).toThrow('507');
    const first = await subscribe(relay);
    await line(first, 0);
    const seen = relay.publish(TOPIC, 'seen', { unifiedPush: true });

    relay.refuseSubscriptions({ status: 503, times: 1_000 });
    relay.dropStreams();
    clock.ms += 10_000;
    expect((await publish(relay, 'during the cut')).status).toBe(200);
    relay.refuseSubscriptions({ status: 503, times: 0 });

    await waitFor(() => first.ended === 'error', 'the dropped stream to break');
    const byId = await subscribe(relay, `?since=${seen.id}`);
    const byTime = await subscribe(relay, `?since=${START_S}`);
    expect((await line(byId, 1)).message).toBe('during the cut');
    expect([(await line(byTime, 1)).message, (await line(byTime, 2)).message]).toEqual(['seen', 'during the cut']);
    expect((await fetch(`${relay.url}/${TOPIC}/json?since=1h`)).status).toBe(400);
  });

  it('takes a bearer token when it has tokens: none is 403, another 401', async () => {
    const relay = await start({ tokens: ['tk_right'] });
    const statusWith = async (headers: Record<string, string>) => (await fetch(`${relay.url}/${TOPIC}/json`, { headers, signal: AbortSignal.timeout(1_000) })).status;

    expect(await statusWith({})).toBe(403);
    expect(await statusWith({ authorization: 'Bearer tk_wrong' })).toBe(401);
    expect(await statusWith({ authorization: 'Bearer tk_right' })).toBe(200);
  });

  it('refuses, impersonates, falls silent and writes chosen lines, as a test asks', async () => {
    const relay = await start({ keepaliveMs: 20 });
    relay.refuseSubscriptions({ status: 429, retryAfter: '3' });
    const refused = await fetch(`${relay.url}/${TOPIC}/json`);
    expect([refused.status, refused.headers.get('retry-after'), await refused.json()]).toEqual([429, '3', { code: 42901, http: 429, error: 'limit reached: too many requests' }]);

    relay.impersonate('web-page');
    const page = await fetch(`${relay.url}/${TOPIC}/json`);
    expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([200, 'text/html; charset=utf-8', expect.stringContaining('<html>')]);
    relay.impersonate('trickle');
    const trickle = await subscribe(relay);
    await waitFor(() => trickle.partial.length >= 3, 'the trickle');
    expect([trickle.lines, relay.subscriberCount(TOPIC)]).toEqual([[], 0]);
    relay.impersonate(undefined);

    const stream = await subscribe(relay);
    await line(stream, 0);
    relay.setSilent(true);
    const linesBefore = stream.lines.length;
    relay.publish(TOPIC, 'unheard');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stream.lines.length).toBe(linesBefore);
    relay.setSilent(false);
    relay.injectLine(TOPIC, '{"event":"message","id":"chosen","time":1}');
    await waitFor(() => stream.lines.includes('{"event":"message","id":"chosen","time":1}'), 'the injected line');
  });

  it('restarts at the same address with its cache and subscribers kept, and closes leaving no socket or timer', async () => {
    const baseline = heldResources();
    const relay = await start({ keepaliveMs: 20 });
    const { url } = relay;
    const before = await subscribe(relay);
    await line(before, 0);
    const kept = relay.publish(TOPIC, 'kept', { unifiedPush: true });

    await relay.stop();
    await waitFor(() => before.ended !== undefined, 'the stream to end');
    expect(before.ended).toBe('end');
    await expect(fetch(`${url}/${TOPIC}/json`)).rejects.toThrow();
    await relay.start();
    expect(relay.url).toBe(url);
    expect((await publish(relay, 'after')).status).toBe(200);
    const after = await subscribe(relay, `?since=${START_S}`);
    expect([(await line(after, 1)).id, (await line(after, 2)).message]).toEqual([kept.id, 'after']);

    await relay.close();
    await waitFor(() => after.ended === 'end', 'the stream to end');
    await untilReleased(baseline, 2_000);
  });
});
