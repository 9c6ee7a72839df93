/**
 * The loopback push relay: a stand-in for an ntfy server (https://docs.ntfy.sh/subscribe/api/,
 * https://docs.ntfy.sh/publish/#unifiedpush) that serves what the plugin sends and the doorbell service
 * publishes, and misbehaves on request the ways a relay or the network can (`streams.ts`). It is a test
 * tool: it speaks only what the plugin uses, as ntfy answers it.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeReply } from '../incoming.js';
import type { Reply } from '../incoming.js';
import { listen, listenOnQuietPort } from '../servers.js';
import type { ListeningServer } from '../servers.js';
import { errorReply, jsonLine, randomId, Streams } from './streams.js';
import type { Impostor, StreamStart, SubscribeRefusal } from './streams.js';

export type { Impostor, SubscribeRefusal } from './streams.js';

export interface RelayOptions {
  /** Bearer tokens it accepts. Absent or empty: Authorization is ignored; present: any other gets 401, none 403. */
  tokens?: readonly string[];
  /** How often an open stream gets a keepalive line. Default 45 s, as ntfy. */
  keepaliveMs?: number;
  /** The relay's clock, in ms since the epoch: every `time` it writes is this in whole seconds. */
  now?: () => number;
}

/** One cached message, as a `message` line of the JSON stream and the answer to a publish carry it. */
export interface RelayMessage {
  /** 12 random letters and digits. */
  id: string;
  /** Unix seconds. */
  time: number;
  /** Unix seconds: when the relay forgets it. */
  expires: number;
  event: 'message';
  topic: string;
  /** The body as text, or its base64 with `encoding: "base64"` when it is not UTF-8. */
  message: string;
  encoding?: 'base64';
}

export interface RelayRequest {
  method: string;
  /** Without the query string. */
  path: string;
  /** Without '?', '' when absent. */
  rawQuery: string;
  /** Lower-cased names, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The status answered (200 for a stream that was opened). */
  status: number;
}

export interface Relay {
  /** `http://127.0.0.1:<port>`, no trailing slash; the same after stop() and start(). */
  readonly url: string;
  /** Every request received, in order, since the start or the last reset(). */
  readonly requests: readonly RelayRequest[];
  /** Forgets the requests received so far (not the cache, the streams or the subscribers). */
  reset(): void;
  /** Open subscription streams for the topic right now. */
  subscriberCount(topic: string): number;
  /** The cached messages of the topic, oldest first. */
  messages(topic: string): RelayMessage[];
  /** Publishes as `POST /<topic>` (`?up=1` when `unifiedPush`) would, skipping HTTP; throws where HTTP answers 507. */
  publish(topic: string, body: string | Buffer, options?: { unifiedPush?: boolean }): RelayMessage;
  /** Ends every open stream at once, as a network break does. New subscriptions still work. */
  dropStreams(): void;
  /** Answers the next subscribe requests with an error instead of a stream; a new call replaces the last. */
  refuseSubscriptions(refusal: SubscribeRefusal): void;
  /** Answers every subscribe request as `impostor` until called with undefined; a refusal comes first. */
  impersonate(impostor: Impostor | undefined): void;
  /** While silent, streams get no line at all; messages are still cached for a stream asking `since=`. */
  setSilent(silent: boolean): void;
  /** Writes `line` plus '\n' to every open stream of the topic: garbage, a message with a chosen `time`. */
  injectLine(topic: string, line: string): void;
  /** Stops listening and ends every stream, as a restart does; the cache and the subscribers seen stay, as ntfy's cache file keeps them. */
  stop(): Promise<void>;
  /** Listens again after stop(), at the same address. */
  start(): Promise<void>;
  /** Stops listening and ends every stream. */
  close(): Promise<void>;
}

/** ntfy's defaults: messages cached for 12 h, a body read up to 4,096 bytes. */
const CACHE_SECONDS = 12 * 60 * 60;
const BODY_LIMIT = 4096;
/** setInterval's longest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const TOPIC = '[-_A-Za-z0-9]{1,64}';
const SUBSCRIBE_PATH = new RegExp(`^/(${TOPIC})/json$`);
const PUBLISH_PATH = new RegExp(`^/(${TOPIC})$`);
const MESSAGE_ID = /^[A-Za-z0-9]{12}$/;

/** A publish body as ntfy reads it: the first BODY_LIMIT bytes; the rest is read and dropped, so the connection stays usable. */
async function readBody(request: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    if (size < BODY_LIMIT) {
      chunks.push(chunk);
    }
    size += chunk.length;
  }
  return Buffer.concat(chunks).subarray(0, BODY_LIMIT);
}

/** Starts the loopback push relay on 127.0.0.1, on a port below the ephemeral range. */
export async function startRelay({ tokens = [], keepaliveMs = 45_000, now = Date.now }: RelayOptions = {}): Promise<Relay> {
  if (!(keepaliveMs >= 1 && keepaliveMs <= MAX_TIMER_MS)) {
    throw new TypeError(`relay options: keepaliveMs must be 1-${MAX_TIMER_MS}`);
  }
  const relay = new LocalRelay(keepaliveMs, new Set(tokens), now);
  await relay.start();
  return relay;
}

class LocalRelay implements Relay {
  readonly requests: RelayRequest[] = [];
  private readonly streams: Streams;
  /** In arrival order, which `since=<id>` counts by (as ntfy's row id, not by time). */
  private cache: RelayMessage[] = [];
  private server: ListeningServer | undefined;
  /** Set by the first start(), and kept: a restarted relay keeps its address. */
  private address = '';

  constructor(
    keepaliveMs: number,
    private readonly tokens: ReadonlySet<string>,
    private readonly nowMs: () => number,
  ) {
    this.streams = new Streams(keepaliveMs, nowMs);
  }

  get url(): string {
    return this.address;
  }

  async start(): Promise<void> {
    if (this.server !== undefined) {
      throw new Error('the push relay is listening already');
    }
    const handler = (request: IncomingMessage, response: ServerResponse): void => this.handle(request, response);
    // Below the ephemeral range, so that no outgoing connection takes the port while the relay is stopped.
    this.server = this.address === '' ? await listenOnQuietPort('127.0.0.1', handler) : await listen('127.0.0.1', Number(new URL(this.address).port), handler);
    this.address = this.server.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.streams.endAll();
    await server?.close();
  }

  close(): Promise<void> {
    return this.stop();
  }

  reset(): void {
    this.requests.length = 0;
  }

  subscriberCount(topic: string): number {
    return this.streams.count(topic);
  }

  messages(topic: string): RelayMessage[] {
    return this.live().flatMap((message) => (message.topic === topic ? [{ ...message }] : []));
  }

  publish(topic: string, body: string | Buffer, options: { unifiedPush?: boolean } = {}): RelayMessage {
    if (!PUBLISH_PATH.test(`/${topic}`)) {
      throw new TypeError(`${JSON.stringify(topic)} is not a topic name: 1-64 letters, digits, '-' and '_'`);
    }
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const message = this.take(topic, bytes.subarray(0, BODY_LIMIT), options.unifiedPush ?? false);
    if (message === undefined) {
      throw new Error('the relay refused the publish: HTTP 507, the UnifiedPush topic has had no subscriber');
    }
    return { ...message };
  }

  dropStreams(): void {
    this.streams.dropAll();
  }

  refuseSubscriptions(refusal: SubscribeRefusal): void {
    this.streams.refuse(refusal);
  }

  impersonate(impostor: Impostor | undefined): void {
    this.streams.impostor = impostor;
  }

  setSilent(silent: boolean): void {
    this.streams.silent = silent;
  }

  injectLine(topic: string, line: string): void {
    this.streams.broadcast(topic, `${line}\n`);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const [path, rawQuery = ''] = (request.url ?? '').split(/\?(.*)/s);
    const record: RelayRequest = { method: request.method ?? '', path, rawQuery, headers: { ...request.headers }, status: 0 };
    this.requests.push(record);
    readBody(request)
      .then((body) => {
        const answer = this.answer(record, body);
        record.status = answer.status;
        if ('start' in answer) {
          answer.start(response);
        } else {
          writeReply(response, answer);
        }
      })
      // The client went away mid-body, or the relay has a bug: it drops the connection rather than crash.
      .catch(() => request.socket.destroy());
  }

  /** In ntfy's order: unknown credentials on any path (401), an unknown path (404, never 405), no credentials (403). */
  private answer(request: RelayRequest, body: Buffer): Reply | StreamStart {
    const subscribe = request.method === 'GET' ? SUBSCRIBE_PATH.exec(request.path) : null;
    const publish = request.method === 'POST' || request.method === 'PUT' ? PUBLISH_PATH.exec(request.path) : null;
    const intercepted = subscribe === null ? undefined : this.streams.intercept();
    if (intercepted !== undefined) {
      return intercepted;
    }
    const access = this.access(request.headers.authorization);
    if (access === 401 || (access === 403 && (subscribe !== null || publish !== null))) {
      return errorReply(access);
    }
    const query = new URLSearchParams(request.rawQuery);
    if (subscribe !== null) {
      return this.subscribe(subscribe[1], query.get('since') ?? '');
    }
    if (publish === null) {
      return errorReply(404);
    }
    const message = this.take(publish[1], body, ['1', 'yes', 'true'].includes(query.get('up') ?? ''));
    return message === undefined ? errorReply(507) : { status: 200, headers: { 'content-type': 'application/json' }, body: jsonLine(message) };
  }

  /** Bearer tokens only, the one form the plugin sends. */
  private access(authorization: string | string[] | undefined): 200 | 401 | 403 {
    if (this.tokens.size === 0) {
      return 200;
    }
    const token = /^Bearer\s+(\S+)$/i.exec(String(authorization ?? '').trim())?.[1];
    return authorization === undefined ? 403 : token !== undefined && this.tokens.has(token) ? 200 : 401;
  }

  /**
   * `GET /<topic>/json`: an `open` line, the cached messages `since` asks for (after a message id, or
   * at and after a unix second; none without it), then each message published to the topic, and a
   * keepalive every keepaliveMs. ntfy answers any other `since` 400.
   */
  private subscribe(topic: string, since: string): Reply | StreamStart {
    const cached = this.live().filter((message) => message.topic === topic);
    let catchUp: RelayMessage[];
    if (since === '') {
      catchUp = [];
    } else if (MESSAGE_ID.test(since)) {
      // As ntfy: an id it no longer (or never) had means the client missed everything still cached.
      catchUp = cached.slice(cached.findIndex((message) => message.id === since) + 1);
    } else if (/^\d+$/.test(since)) {
      catchUp = cached.filter((message) => message.time >= Number(since)).sort((a, b) => a.time - b.time);
    } else {
      return errorReply(400);
    }
    this.streams.seen(topic);
    return { status: 200, start: (response) => this.streams.follow(response, topic, catchUp.map(jsonLine)) };
  }

  /**
   * A publish, cached and written to the topic's streams before the publisher hears back; undefined for
   * a UnifiedPush one the topic does not take (ntfy's 507). One without `up=1` is taken the same way.
   */
  private take(topic: string, bytes: Buffer, unifiedPush: boolean): RelayMessage | undefined {
    if (unifiedPush && !this.streams.takesUnifiedPush(topic)) {
      return undefined;
    }
    const time = Math.floor(this.nowMs() / 1000);
    const body = isUtf8(bytes) ? { message: bytes.toString('utf8') } : { message: bytes.toString('base64'), encoding: 'base64' as const };
    // Fields in the order ntfy writes them.
    const message: RelayMessage = { id: randomId(), time, expires: time + CACHE_SECONDS, event: 'message', topic, ...body };
    this.cache.push(message);
    this.streams.broadcast(topic, jsonLine(message));
    return message;
  }

  /** The cache without expired messages, which ntfy never answers with. */
  private live(): RelayMessage[] {
    const now = Math.floor(this.nowMs() / 1000);
    this.cache = this.cache.filter((message) => message.expires > now);
    return this.cache;
  }
}
