/**
 * The loopback push relay's publish side and its access control over real HTTP: how a body becomes a
 * message (ntfy's rules with and without UnifiedPush), subscriber-based rate limiting, the cache, the
 * in-process publish(), tokens, and the request log.
 */
import { describe, expect, it } from '@jest/globals';
import { RelayPublishError } from '../../simulator/relay/index.js';
import type { Relay, RelayMessage } from '../../simulator/relay/index.js';
import { clock, ID, start, START_MS, START_S } from './relay-harness.js';

/** A topic that can have a UnifiedPush subscriber: `up` and 12 more characters. */
const UP_TOPIC = 'upAbCdEf012345';
const TOKEN = 'tk_relaytoken0123456789abcdefghi';

const ATTACHMENTS_DISALLOWED =
  '{"code":40014,"http":400,"error":"invalid request: attachments not allowed","link":"https://ntfy.sh/docs/config/#attachments"}\n';
const NO_SUBSCRIBER = '{"code":50701,"http":507,"error":"cannot publish to UnifiedPush topic without previously active subscriber"}\n';
const UNAUTHORIZED = '{"code":40101,"http":401,"error":"unauthorized","link":"https://ntfy.sh/docs/publish/#authentication"}\n';
const FORBIDDEN = '{"code":40301,"http":403,"error":"forbidden","link":"https://ntfy.sh/docs/publish/#authentication"}\n';

interface Answer {
  status: number;
  type: string | null;
  text: string;
}

async function send(relay: Relay, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${relay.url}${path}`, { method: 'POST', ...init });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** The message a successful publish answered. */
async function published(relay: Relay, path: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<RelayMessage> {
  const answer = await send(relay, path, { body, headers });
  expect([answer.status, answer.type]).toEqual([200, 'application/json']);
  return JSON.parse(answer.text) as RelayMessage;
}

describe('relay: publishing without UnifiedPush', () => {
  it('answers 200 with the message as one JSON line, in ntfy field order, and caches it', async () => {
    const relay = await start();

    const answer = await send(relay, '/alpha', { body: '  hello \n' });

    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^\{"id":"[A-Za-z0-9]{12}","time":\d+,"expires":\d+,"event":"message","topic":"alpha","message":"hello"\}\n$/);
    const message = JSON.parse(answer.text) as RelayMessage;
    expect(message).toEqual({ id: expect.stringMatching(ID), time: START_S, expires: START_S + 12 * 3600, event: 'message', topic: 'alpha', message: 'hello' });
    expect(relay.messages('alpha')).toEqual([message]);
  });

  it('takes PUT as POST, and an empty or blank body as "triggered"', async () => {
    const relay = await start();

    expect((await published(relay, '/alpha', 'put', {})).message).toBe('put');
    expect((await published(relay, '/alpha', '', {})).message).toBe('triggered');
    expect((await published(relay, '/alpha', ' \r\n\t', {})).message).toBe('triggered');
    const put = await send(relay, '/alpha', { method: 'PUT', body: 'by put' });
    expect([put.status, (JSON.parse(put.text) as RelayMessage).message]).toEqual([200, 'by put']);
  });

  it('trims white space as Go does: NEL and NBSP go, a byte order mark stays', async () => {
    const relay = await start();

    expect((await published(relay, '/alpha', '\u0085\u00a0hi\u3000')).message).toBe('hi');
    expect((await published(relay, '/alpha', '\ufeffhi')).message).toBe('\ufeffhi');
  });

  it('writes <, > and & escaped, as Go does', async () => {
    const relay = await start();

    const answer = await send(relay, '/alpha', { body: '<b>&' });

    expect(answer.text).toContain('"message":"\\u003cb\\u003e\\u0026"');
    expect((JSON.parse(answer.text) as RelayMessage).message).toBe('<b>&');
  });

  it('refuses 400 (40014) a body over 4096 bytes or not UTF-8, as an ntfy without attachments does', async () => {
    const relay = await start();

    expect((await published(relay, '/alpha', 'a'.repeat(4096))).message).toHaveLength(4096);
    for (const body of ['a'.repeat(4097), new Uint8Array([0x7b, 0xff, 0x7d])]) {
      expect(await send(relay, '/alpha', { body })).toEqual({ status: 400, type: 'application/json', text: ATTACHMENTS_DISALLOWED });
    }
    expect(relay.messages('alpha')).toHaveLength(1);
  });
});

describe('relay: publishing with UnifiedPush', () => {
  it('keeps a UTF-8 body untrimmed, with up=1 or X-UnifiedPush: 1', async () => {
    const relay = await start({ subscriberRateLimiting: false });

    expect((await published(relay, '/alpha?up=1', ' {"a":1}\n')).message).toBe(' {"a":1}\n');
    expect((await published(relay, '/alpha', ' spaced ', { 'X-UnifiedPush': '1' })).message).toBe(' spaced ');
    expect((await published(relay, '/alpha?up=0', ' spaced ')).message).toBe('spaced');
    expect((await published(relay, '/alpha?up=1', '')).message).toBe('triggered');
  });

  it('sends a body that is not UTF-8 as standard padded base64 with encoding "base64"', async () => {
    const relay = await start({ subscriberRateLimiting: false });

    const message = await published(relay, '/alpha?up=1', new Uint8Array([0x7b, 0xff, 0x7d, 0xfb]));

    expect(message).toEqual({ id: expect.stringMatching(ID), time: START_S, expires: START_S + 43200, event: 'message', topic: 'alpha', message: 'e/99+w==', encoding: 'base64' });
  });

  it('drops what lies beyond 4096 bytes, even through a character, never answering 400', async () => {
    const relay = await start({ subscriberRateLimiting: false });

    expect((await published(relay, '/alpha?up=1', 'a'.repeat(5000))).message).toBe('a'.repeat(4096));
    const cut = await published(relay, '/alpha?up=1', `${'a'.repeat(4095)}é`);
    expect([cut.encoding, Buffer.from(cut.message, 'base64')]).toEqual(['base64', Buffer.from(`${'a'.repeat(4095)}\xc3`, 'latin1')]);
  });
});

describe('relay: subscriber-based rate limiting', () => {
  it('refuses 507 (50701) a UnifiedPush publish to a topic nobody subscribed to', async () => {
    const relay = await start();

    expect(await send(relay, `/${UP_TOPIC}?up=1`, { body: 'x' })).toEqual({ status: 507, type: 'application/json', text: NO_SUBSCRIBER });
    expect((await send(relay, `/${UP_TOPIC}`, { body: 'not UnifiedPush' })).status).toBe(200);
    expect(relay.messages(UP_TOPIC).map((message) => message.message)).toEqual(['not UnifiedPush']);
  });

  it('accepts it while a stream is open, and for a day after the subscriber was last seen', async () => {
    const relay = await start();
    const controller = new AbortController();
    await fetch(`${relay.url}/${UP_TOPIC}/json`, { signal: controller.signal });

    expect((await send(relay, `/${UP_TOPIC}?up=1`, { body: 'while open' })).status).toBe(200);
    controller.abort();
    while (relay.subscriberCount(UP_TOPIC) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    clock.ms += 24 * 3600 * 1000 - 1000;
    expect((await send(relay, `/${UP_TOPIC}?up=1`, { body: 'after the stream' })).status).toBe(200);
    clock.ms += 1000;
    expect((await send(relay, `/${UP_TOPIC}?up=1`, { body: 'a day later' })).status).toBe(507);
  });

  it('counts a poll as a subscriber, but only on topics of 14 characters starting with up', async () => {
    const relay = await start();
    const other = 'alpha';

    await fetch(`${relay.url}/${UP_TOPIC},${other}/json?poll=1`);

    expect((await send(relay, `/${UP_TOPIC}?up=1`, { body: 'x' })).status).toBe(200);
    expect((await send(relay, `/${other}?up=1`, { body: 'x' })).status).toBe(507);
  });

  it('accepts every UnifiedPush publish with subscriberRateLimiting off', async () => {
    const relay = await start({ subscriberRateLimiting: false });

    expect((await send(relay, `/${UP_TOPIC}?up=1`, { body: 'x' })).status).toBe(200);
  });
});

describe('relay: publish() in-process', () => {
  it('follows the HTTP rules, caches on the relay clock, and is not a request', async () => {
    const relay = await start({ cacheMs: 90_500, subscriberRateLimiting: false });
    clock.ms = START_MS + 1_999;

    const text = relay.publish('alpha', '  text  ');
    const binary = relay.publish('alpha', Buffer.from([0xff]), { unifiedPush: true });
    const long = relay.publish('alpha', 'a'.repeat(5000), { unifiedPush: true });

    expect(text).toEqual({ id: expect.stringMatching(ID), time: START_S + 1, expires: START_S + 91, event: 'message', topic: 'alpha', message: 'text' });
    expect([binary.message, binary.encoding]).toEqual(['/w==', 'base64']);
    expect(long.message).toBe('a'.repeat(4096));
    expect(relay.messages('alpha')).toEqual([text, binary, long]);
    expect(relay.requests).toEqual([]);
  });

  it('throws what HTTP would have answered, caching nothing', async () => {
    const relay = await start();
    const thrown = (run: () => unknown): unknown => {
      try {
        run();
      } catch (error) {
        return error instanceof RelayPublishError ? error.error : error;
      }
      return 'nothing thrown';
    };

    expect(thrown(() => relay.publish(UP_TOPIC, 'x', { unifiedPush: true }))).toEqual(JSON.parse(NO_SUBSCRIBER));
    expect(thrown(() => relay.publish('alpha', 'a'.repeat(4097)))).toEqual(JSON.parse(ATTACHMENTS_DISALLOWED));
    expect(() => relay.publish('al.pha', 'x')).toThrow(TypeError);
    expect([...relay.messages('alpha'), ...relay.messages(UP_TOPIC)]).toEqual([]);
  });
});

describe('relay: access tokens', () => {
  const subscribePath = '/alpha/json?poll=1';

  it('lets a known Bearer token subscribe and publish, and refuses an unknown one 401 (40101)', async () => {
    const relay = await start({ tokens: ['tk_other', TOKEN] });
    const bearer = (token: string): RequestInit => ({ headers: { Authorization: `Bearer ${token}` } });

    expect((await send(relay, '/alpha', { ...bearer(TOKEN), body: 'ok' })).status).toBe(200);
    expect((await send(relay, subscribePath, { ...bearer(TOKEN), method: 'GET' })).status).toBe(200);
    for (const init of [{ ...bearer('tk_wrong'), body: 'x' }, { ...bearer('tk_wrong'), method: 'GET' }]) {
      expect(await send(relay, init.method === 'GET' ? subscribePath : '/alpha', init)).toEqual({ status: 401, type: 'application/json', text: UNAUTHORIZED });
    }
    expect(relay.messages('alpha').map((message) => message.message)).toEqual(['ok']);
  });

  it('refuses a request without a token 403 (40301), and reads other schemes as none', async () => {
    const relay = await start({ tokens: [TOKEN] });

    expect(await send(relay, '/alpha', { body: 'x' })).toEqual({ status: 403, type: 'application/json', text: FORBIDDEN });
    expect((await send(relay, subscribePath, { method: 'GET' })).text).toBe(FORBIDDEN);
    expect((await send(relay, subscribePath, { method: 'GET', headers: { Authorization: `Token ${TOKEN}` } })).status).toBe(403);
  });

  it('takes a token as the password of Basic with no user name, and refuses any user 401', async () => {
    const relay = await start({ tokens: [TOKEN] });
    const basic = (credentials: string): RequestInit => ({ method: 'GET', headers: { Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } });

    expect((await send(relay, subscribePath, basic(`:${TOKEN}`))).status).toBe(200);
    expect((await send(relay, subscribePath, basic(`phil:${TOKEN}`))).status).toBe(401);
  });

  it('refuses unknown credentials 401 on any path, while no credentials there get 404', async () => {
    const relay = await start({ tokens: [TOKEN] });

    expect((await send(relay, '/no/such/path', { method: 'GET', headers: { Authorization: 'Bearer tk_wrong' } })).status).toBe(401);
    expect((await send(relay, '/no/such/path', { method: 'GET' })).status).toBe(404);
  });

  it('ignores Authorization entirely without tokens', async () => {
    const relay = await start();

    expect((await send(relay, '/alpha', { body: 'x', headers: { Authorization: 'Bearer anything' } })).status).toBe(200);
    expect((await send(relay, subscribePath, { method: 'GET', headers: { Authorization: 'Basic !!!' } })).status).toBe(200);
  });
});

describe('relay: the request log', () => {
  it('records every request in order, with its path, raw query, lower-cased headers and status', async () => {
    const relay = await start({ tokens: [TOKEN] });

    await send(relay, '/alpha?up=0&x=%20', { body: 'x', headers: { Authorization: `Bearer ${TOKEN}`, 'X-Custom': 'yes' } });
    await send(relay, '/alpha/json?poll=1', { method: 'GET' });

    expect(relay.requests).toEqual([
      { method: 'POST', path: '/alpha', rawQuery: 'up=0&x=%20', headers: expect.objectContaining({ authorization: `Bearer ${TOKEN}`, 'x-custom': 'yes' }), status: 200 },
      { method: 'GET', path: '/alpha/json', rawQuery: 'poll=1', headers: expect.not.objectContaining({ authorization: expect.anything() }), status: 403 },
    ]);
  });
});
