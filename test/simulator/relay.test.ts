/**
 * The loopback push relay's subscribe side over real HTTP: the JSON stream (open line first, cached
 * messages as `since` asks, live messages, keepalives), `poll=1`, the topic rules, the knobs that make
 * streams misbehave, and close().
 */
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay, RelayMessage } from '../../simulator/relay/index.js';
import { clock, ID, start, START_MS, START_S } from './relay-harness.js';

const STREAM_TYPE = 'application/x-ndjson; charset=utf-8';

/** The lines of a streamed answer as they arrive. */
class LineReader {
  readonly lines: string[] = [];
  /** Set once the body ended: 'end' when it ended properly, 'error' when the connection broke. */
  ended: 'end' | 'error' | undefined;
  private buffered = '';
  private wake: (() => void) | undefined;

  constructor(body: ReadableStream<Uint8Array>) {
    void this.pump(body.getReader());
  }

  /** The next line, waiting up to `timeoutMs` for it. */
  async next(timeoutMs = 2_000): Promise<string> {
    await this.until(() => this.lines.length > 0 || this.ended !== undefined, timeoutMs);
    const line = this.lines.shift();
    if (line === undefined) {
      throw new Error(`no line arrived (stream ${this.ended ?? 'still open'})`);
    }
    return line;
  }

  async nextJson(): Promise<Record<string, unknown>> {
    return JSON.parse(await this.next()) as Record<string, unknown>;
  }

  async whenEnded(): Promise<'end' | 'error' | undefined> {
    await this.until(() => this.ended !== undefined, 2_000);
    return this.ended;
  }

  /** Waits for news from the body until `condition` holds or time is up, leaving no timer behind. */
  private async until(condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition() && performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - performance.now());
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private async pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        this.buffered += decoder.decode(chunk.value, { stream: true });
        const complete = this.buffered.split('\n');
        this.buffered = complete.pop()!;
        this.lines.push(...complete);
        this.wake?.();
      }
      this.ended = 'end';
    } catch {
      this.ended = 'error';
    }
    this.wake?.();
  }
}

async function subscribe(relay: Relay, path: string, headers: Record<string, string> = {}): Promise<{ response: Response; reader: LineReader }> {
  const response = await fetch(`${relay.url}${path}`, { headers });
  expect(response.status).toBe(200);
  return { response, reader: new LineReader(response.body!) };
}

async function poll(relay: Relay, path: string, headers: Record<string, string> = {}): Promise<RelayMessage[]> {
  const response = await fetch(`${relay.url}${path}`, { headers });
  const text = await response.text();
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe(STREAM_TYPE);
  return text === '' ? [] : text.trimEnd().split('\n').map((line) => JSON.parse(line) as RelayMessage);
}

async function publishHttp(relay: Relay, topic: string, body: string): Promise<string> {
  const response = await fetch(`${relay.url}/${topic}`, { method: 'POST', body });
  expect(response.status).toBe(200);
  return response.text();
}

/** Three cached messages: a and b on topic alpha, c on beta, published 10 s apart. */
function publishThree(relay: Relay): RelayMessage[] {
  const published = ['a', 'b', 'c'].map((body, index) => {
    clock.ms = START_MS + index * 10_000;
    return relay.publish(index < 2 ? 'alpha' : 'beta', body);
  });
  clock.ms = START_MS + 60_000;
  return published;
}

const bodies = (messages: RelayMessage[]): string[] => messages.map((message) => message.message);

describe('relay: the JSON stream', () => {
  it('answers a chunked ndjson stream whose first line is open, then keeps it open', async () => {
    const relay = await start();
    const { response, reader } = await subscribe(relay, '/alpha/json');

    const open = await reader.next();

    expect(response.headers.get('content-type')).toBe(STREAM_TYPE);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(Object.keys(JSON.parse(open) as object)).toEqual(['id', 'time', 'event', 'topic']);
    expect(JSON.parse(open)).toEqual({ id: expect.stringMatching(ID), time: START_S, event: 'open', topic: 'alpha' });
    expect(relay.subscriberCount('alpha')).toBe(1);
    expect(relay.requests).toEqual([{ method: 'GET', path: '/alpha/json', rawQuery: '', headers: expect.objectContaining({ host: expect.any(String) }), status: 200 }]);
  });

  it('sends a keepalive line every keepaliveMs, with a fresh id and the relay time', async () => {
    const relay = await start({ keepaliveMs: 50 });
    const { reader } = await subscribe(relay, '/alpha,beta/json');
    const open = await reader.nextJson();
    clock.ms += 5_000;

    const first = await reader.nextJson();
    const firstAt = performance.now();
    const second = await reader.nextJson();

    // Node's timers may fire a millisecond before performance.now() says the delay is up.
    expect(performance.now() - firstAt).toBeGreaterThanOrEqual(45);
    expect(first).toEqual({ id: expect.stringMatching(ID), time: START_S + 5, event: 'keepalive', topic: 'alpha,beta' });
    expect(new Set([open.id, first.id, second.id]).size).toBe(3);
  });

  it('streams each message published to any of its topics, as the publish answered it', async () => {
    const relay = await start();
    const { reader } = await subscribe(relay, '/alpha,beta/json');
    await reader.next();

    const answered = await publishHttp(relay, 'beta', 'over http');
    relay.publish('gamma', 'not followed');
    const inProcess = relay.publish('alpha', 'in process');

    expect(await reader.next()).toBe(answered.trimEnd());
    expect(JSON.parse(await reader.next())).toEqual(inProcess);
    expect(reader.lines).toEqual([]);
    expect(relay.subscriberCount('alpha')).toBe(1);
    expect(relay.subscriberCount('gamma')).toBe(0);
  });

  it('sends the cached messages since asks for after the open line and before live ones', async () => {
    const relay = await start();
    const [a] = publishThree(relay);
    const { reader } = await subscribe(relay, `/alpha,beta/json?since=${a.id}`);

    expect((await reader.nextJson()).event).toBe('open');
    expect((await reader.nextJson()).message).toBe('b');
    expect((await reader.nextJson()).message).toBe('c');
    relay.publish('alpha', 'live');
    expect((await reader.nextJson()).message).toBe('live');
  });

  it('sends nothing cached without since, or with since=none', async () => {
    const relay = await start();
    publishThree(relay);

    for (const path of ['/alpha/json', '/alpha/json?since=none']) {
      const { reader } = await subscribe(relay, path);
      expect((await reader.nextJson()).event).toBe('open');
      relay.publish('alpha', `live after ${path}`);
      expect((await reader.nextJson()).message).toBe(`live after ${path}`);
    }
  });

  it('ends when the client hangs up', async () => {
    const relay = await start();
    const controller = new AbortController();
    const response = await fetch(`${relay.url}/alpha/json`, { signal: controller.signal });
    await new LineReader(response.body!).next();

    controller.abort();

    for (let attempt = 0; attempt < 50 && relay.subscriberCount('alpha') > 0; attempt += 1) {
      await sleep(20);
    }
    expect(relay.subscriberCount('alpha')).toBe(0);
  });
});

describe('relay: since and poll', () => {
  it('answers poll=1 with every cached message of its topics by time, no open line, and ends', async () => {
    const relay = await start();
    clock.ms = START_MS + 10_000;
    relay.publish('alpha', 'later');
    clock.ms = START_MS;
    relay.publish('beta', 'earlier');

    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1'))).toEqual(['earlier', 'later']);
    expect(bodies(await poll(relay, '/alpha/json', { 'X-Poll': 'yes' }))).toEqual(['later']);
    expect(await poll(relay, '/empty/json?poll=1')).toEqual([]);
    expect(relay.subscriberCount('alpha')).toBe(0);
  });

  it('reads since=<id> as strictly after that message, and an unknown id as everything cached', async () => {
    const relay = await start();
    const [a, b, c] = publishThree(relay);

    expect(bodies(await poll(relay, `/alpha,beta/json?poll=1&since=${a.id}`))).toEqual(['b', 'c']);
    expect(bodies(await poll(relay, `/alpha/json?poll=1&since=${c.id}`))).toEqual([]);
    expect(bodies(await poll(relay, `/alpha/json?poll=1&since=${b.id}`))).toEqual([]);
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=unknownId123'))).toEqual(['a', 'b', 'c']);
  });

  it('reads since=<unix time> as at or after it, and a Go duration as back from the relay clock', async () => {
    const relay = await start();
    publishThree(relay);

    expect(bodies(await poll(relay, `/alpha,beta/json?poll=1&since=${START_S + 10}`))).toEqual(['b', 'c']);
    expect(bodies(await poll(relay, `/alpha,beta/json?poll=1&since=${START_S + 11}`))).toEqual(['c']);
    // The clock is 60 s after the first message.
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=50s'))).toEqual(['b', 'c']);
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=1m'))).toEqual(['a', 'b', 'c']);
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=0.75m'))).toEqual(['c']);
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=1h'))).toEqual(['a', 'b', 'c']);
  });

  it('reads since=all, since=latest (the newest of each topic) and since=none', async () => {
    const relay = await start();
    publishThree(relay);

    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=all'))).toEqual(['a', 'b', 'c']);
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=latest'))).toEqual(['b', 'c']);
    expect(bodies(await poll(relay, '/alpha,beta/json?poll=1&since=none'))).toEqual([]);
  });

  it('reads X-Since before the query, as ntfy reads headers first', async () => {
    const relay = await start();
    publishThree(relay);

    expect(bodies(await poll(relay, '/alpha/json?poll=1&since=none', { 'X-Since': 'all' }))).toEqual(['a', 'b']);
  });

  it('answers 400 (40008) to a since it cannot read, days included', async () => {
    const relay = await start();

    for (const since of ['1d', 'yesterday', '12abc', '10M']) {
      const response = await fetch(`${relay.url}/alpha/json?since=${since}`);
      expect([response.status, response.headers.get('content-type'), await response.text()]).toEqual([
        400,
        'application/json',
        '{"code":40008,"http":400,"error":"invalid since parameter","link":"https://ntfy.sh/docs/subscribe/api/#fetch-cached-messages"}\n',
      ]);
    }
    expect(relay.subscriberCount('alpha')).toBe(0);
  });

  it('never replays an expired message, and treats its id as unknown', async () => {
    const relay = await start({ cacheMs: 60_000 });
    const old = relay.publish('alpha', 'old');
    clock.ms = START_MS + 30_000;
    relay.publish('alpha', 'young');
    clock.ms = START_MS + 60_000;

    expect(bodies(relay.messages('alpha'))).toEqual(['young']);
    expect(bodies(await poll(relay, '/alpha/json?poll=1'))).toEqual(['young']);
    expect(bodies(await poll(relay, `/alpha/json?poll=1&since=${old.id}`))).toEqual(['young']);
  });
});

describe('relay: paths', () => {
  const NOT_FOUND = '{"code":40401,"http":404,"error":"page not found"}\n';

  it('answers 404 with ntfy error 40401 to a topic that breaks the rules, and to anything it does not serve', async () => {
    const relay = await start();
    const requests: Array<[string, string]> = [
      ['GET', `/${'a'.repeat(65)}/json`],
      ['GET', '/al.pha/json'],
      ['GET', '/alpha,,beta/json'],
      ['GET', '/alpha/json/'],
      ['GET', '/alpha/sse'],
      ['GET', '/alpha'],
      ['DELETE', '/alpha'],
      ['POST', '/alpha/json'],
      ['PATCH', '/alpha'],
      ['GET', '/'],
    ];

    for (const [method, path] of requests) {
      const response = await fetch(`${relay.url}${path}`, { method });
      expect([method, path, response.status, await response.text()]).toEqual([method, path, 404, NOT_FOUND]);
    }
    const longest = await fetch(`${relay.url}/${'a'.repeat(64)},A-_9/json?poll=1`);
    expect(longest.status).toBe(200);
  });
});

describe('relay: knobs', () => {
  it('dropStreams() breaks every stream at once; new subscriptions still work', async () => {
    const relay = await start();
    const first = await subscribe(relay, '/alpha/json');
    const second = await subscribe(relay, '/beta/json');
    await Promise.all([first.reader.next(), second.reader.next()]);

    relay.dropStreams();

    expect(relay.subscriberCount('alpha') + relay.subscriberCount('beta')).toBe(0);
    expect([await first.reader.whenEnded(), await second.reader.whenEnded()]).toEqual(['error', 'error']);
    const again = await subscribe(relay, '/alpha/json');
    expect((await again.reader.nextJson()).event).toBe('open');
  });

  it('refuseSubscriptions() answers the next `times` subscribe requests with the status, ntfy body and Retry-After; reset() forgets the requests', async () => {
    const relay = await start();
    relay.refuseSubscriptions({ status: 429, retryAfter: '7', times: 2 });

    const answers = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await fetch(`${relay.url}/alpha/json?poll=1`);
      answers.push([response.status, response.headers.get('retry-after'), await response.text()]);
    }

    const refused = [429, '7', '{"code":42901,"http":429,"error":"limit reached: too many requests","link":"https://ntfy.sh/docs/publish/#limitations"}\n'];
    expect(answers).toEqual([refused, refused, [200, null, '']]);
    expect(relay.requests.map((request) => request.status)).toEqual([429, 429, 200]);
    relay.reset();
    expect(relay.requests).toEqual([]);
  });

  it('refuses with a status ntfy never sends in the same shape, and with 401 or 403 as ntfy does', async () => {
    const relay = await start();
    const bodyOf = async (): Promise<unknown> => (await fetch(`${relay.url}/alpha/json`)).json();

    relay.refuseSubscriptions({ status: 503 });
    expect(await bodyOf()).toEqual({ code: 50301, http: 503, error: 'service unavailable' });
    relay.refuseSubscriptions({ status: 401 });
    expect(await bodyOf()).toEqual({ code: 40101, http: 401, error: 'unauthorized', link: 'https://ntfy.sh/docs/publish/#authentication' });
    relay.refuseSubscriptions({ status: 403 });
    expect(await bodyOf()).toMatchObject({ code: 40301, http: 403, error: 'forbidden' });
  });

  it('refuseSubscriptions() with times 0 withdraws a refusal, leaves publishing alone, and rejects nonsense', async () => {
    const relay = await start();
    relay.refuseSubscriptions({ status: 503, times: 1_000 });

    expect((await fetch(`${relay.url}/alpha`, { method: 'POST', body: 'hi' })).status).toBe(200);
    expect((await fetch(`${relay.url}/alpha/json?poll=1`)).status).toBe(503);
    relay.refuseSubscriptions({ status: 503, times: 0 });
    expect((await fetch(`${relay.url}/alpha/json?poll=1`)).status).toBe(200);
    expect(() => relay.refuseSubscriptions({ status: 200 })).toThrow(TypeError);
    expect(() => relay.refuseSubscriptions({ status: 429, times: 1.5 })).toThrow('times must be an integer >= 0');
  });

  it('setSilent(true) withholds every line from every stream, new ones included; setSilent(false) resumes keepalives', async () => {
    const relay = await start({ keepaliveMs: 50 });
    const early = await subscribe(relay, '/alpha/json');
    await early.reader.next();

    relay.setSilent(true);
    const late = await subscribe(relay, '/alpha/json');
    relay.publish('alpha', 'during the silence');
    relay.injectLine('alpha', 'injected');
    await sleep(200);

    expect([early.reader.lines, late.reader.lines]).toEqual([[], []]);
    expect(relay.subscriberCount('alpha')).toBe(2);
    expect(bodies(relay.messages('alpha'))).toEqual(['during the silence']);
    relay.setSilent(false);
    expect((await early.reader.nextJson()).event).toBe('keepalive');
    expect((await late.reader.nextJson()).event).toBe('keepalive');
  });

  it('injectLine() writes the raw line to every stream following the topic', async () => {
    const relay = await start();
    const alpha = await subscribe(relay, '/alpha/json');
    const both = await subscribe(relay, '/beta,alpha/json');
    const beta = await subscribe(relay, '/beta/json');
    await Promise.all([alpha.reader.next(), both.reader.next(), beta.reader.next()]);

    relay.injectLine('alpha', 'not json at all');
    relay.injectLine('beta', '{"event":"message_delete"}');

    expect([await alpha.reader.next(), await both.reader.next(), await both.reader.next(), await beta.reader.next()]).toEqual([
      'not json at all',
      'not json at all',
      '{"event":"message_delete"}',
      '{"event":"message_delete"}',
    ]);
  });
});

describe('relay: lifecycle', () => {
  const KINDS = ['TCPServerWrap', 'TCPSocketWrap', 'Timeout'] as const;
  const counts = (): number[] => KINDS.map((kind) => process.getActiveResourcesInfo().filter((active) => active === kind).length);

  /**
   * The kinds of handle (servers, sockets, timers) more numerous than in `baseline`, each counted on its
   * own so that sockets of earlier tests still closing cannot hide a timer left running. Handles close
   * a moment after their owner did, so this waits up to a second for the counts to fall back.
   */
  async function handlesLeft(baseline: number[]): Promise<string[]> {
    const excess = (): string[] => KINDS.filter((_, index) => counts()[index] > baseline[index]);
    for (let attempt = 0; attempt < 50 && excess().length > 0; attempt += 1) {
      await sleep(20);
    }
    return excess();
  }

  it('close() ends every stream, stops listening and leaves no socket or timer behind', async () => {
    const baseline = counts();
    const relay = await startRelay({ keepaliveMs: 50 });
    const streams = await Promise.all([subscribe(relay, '/alpha/json'), subscribe(relay, '/beta/json')]);
    await Promise.all(streams.map(({ reader }) => reader.next()));

    const started = performance.now();
    await relay.close();

    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await Promise.all(streams.map(({ reader }) => reader.whenEnded()))).toEqual(['end', 'end']);
    expect(relay.subscriberCount('alpha')).toBe(0);
    await expect(fetch(`${relay.url}/alpha/json`)).rejects.toThrow();
    await relay.close();
    expect(await handlesLeft(baseline)).toEqual([]);
  });

  it('stop() ends every stream and refuses connections; start() serves again at the same address with its cache kept', async () => {
    const relay = await start();
    const { url } = relay;
    const before = await subscribe(relay, '/alpha/json');
    await before.reader.next();
    const [kept] = publishThree(relay);

    await relay.stop();

    expect(await before.reader.whenEnded()).toBe('end');
    await expect(fetch(`${url}/alpha/json?poll=1`)).rejects.toThrow();
    await relay.start();
    expect(relay.url).toBe(url);
    expect(bodies(await poll(relay, `/alpha/json?poll=1&since=all`))).toEqual(['a', 'b']);
    const after = await subscribe(relay, `/alpha/json?since=${kept.id}`);
    expect((await after.reader.nextJson()).event).toBe('open');
    expect((await after.reader.nextJson()).message).toBe('b');
    await expect(relay.start()).rejects.toThrow('listening already');
  });

  it('refuses to bind anything but loopback, and options that cannot work', async () => {
    await expect(startRelay({ host: '0.0.0.0' })).rejects.toThrow('loopback addresses only');
    await expect(startRelay({ host: '192.168.1.20' })).rejects.toThrow('loopback addresses only');
    await expect(startRelay({ keepaliveMs: 0 })).rejects.toThrow(TypeError);
    await expect(startRelay({ cacheMs: -1 })).rejects.toThrow('cacheMs must be a number >= 0');
    await expect(startRelay({ tokens: ['two words'] })).rejects.toThrow('tokens must be non-empty and without white space');
  });

  it('serves on 127.0.0.1 by default, as its url says', async () => {
    const relay = await start();

    expect(relay.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${relay.url}/alpha/json?poll=1`)).status).toBe(200);
  });
});
