/**
 * The relay's open answers, and the faults tests inject into them or in their place: silence, a drop,
 * a refusal, a 200 that is no ntfy stream. The relay's contract is in `index.ts`.
 */
import { randomInt } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { Reply } from '../incoming.js';

/**
 * A server at the relay's address that answers `200` but is no ntfy relay: `'web-page'` an HTML page
 * (a captive portal, a proxy's error page), then the end of the answer; `'trickle'` a byte that is no
 * line every keepaliveMs, for as long as the client listens (a stuck proxy).
 */
export type Impostor = 'web-page' | 'trickle';

/** The next `times` subscribe requests are answered with this status and ntfy's JSON error body. */
export interface SubscribeRefusal {
  /** 400-599. */
  status: number;
  /** Sent as a Retry-After header (ntfy itself never sends one; a proxy in front may). */
  retryAfter?: string;
  /** Default 1. */
  times?: number;
}

/** A stream to open: the answer's status is 200 once `start` has sent the headers. */
export interface StreamStart {
  status: 200;
  start(response: ServerResponse): void;
}

/** One answer that stays open: a JSON stream of `topic`, or an impostor's trickle (no topic). */
interface Stream {
  topic: string | undefined;
  response: ServerResponse;
  keepalive: NodeJS.Timeout;
}

/** The charset is there because ntfy's Android client needs it. */
const STREAM_HEADERS = { 'content-type': 'application/x-ndjson; charset=utf-8' };
const HTML_HEADERS = { 'content-type': 'text/html; charset=utf-8' };
/** What a captive portal answers whatever was asked: a whole page, then the end of the answer. */
const PORTAL_PAGE = '<!DOCTYPE html>\n<html><head><title>Wi-Fi sign-in</title></head>\n<body><h1>Accept the terms to use this network</h1></body></html>\n';
/** What a stuck proxy trickles: never a whole line, so it neither proves a stream nor ends one. */
const TRICKLE = '.';

/** ntfy forgets a subscriber it has not seen for a day, and with it the topic's right to UnifiedPush publishes. */
const SUBSCRIBER_MEMORY_MS = 24 * 60 * 60 * 1000;
/** Only these topics take UnifiedPush publishes, and only once they have had a subscriber (ntfy.sh's rule). */
const UNIFIED_PUSH_TOPIC = /^up[-_A-Za-z0-9]{12}$/;

/** ntfy's error codes and texts for the statuses it sends; any other status (a proxy's) gets status×100+1 and its name. */
const NTFY_ERRORS: Readonly<Record<number, [number, string]>> = {
  400: [40008, 'invalid since parameter'],
  401: [40101, 'unauthorized'],
  403: [40301, 'forbidden'],
  404: [40401, 'page not found'],
  429: [42901, 'limit reached: too many requests'],
  507: [50701, 'cannot publish to UnifiedPush topic without previously active subscriber'],
};

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** ntfy's ids, of messages and of open and keepalive lines alike: 12 random letters and digits. */
export const randomId = (): string => Array.from({ length: 12 }, () => ID_ALPHABET[randomInt(ID_ALPHABET.length)]).join('');

/** One line of the JSON stream, or the body of a JSON answer, as ntfy ends each: with '\n'. */
export const jsonLine = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** ntfy's error answer: `{"code":40401,"http":404,"error":"page not found"}`. */
export function errorReply(status: number, headers: Record<string, string> = {}): Reply {
  const [code, error] = NTFY_ERRORS[status] ?? [status * 100 + 1, (STATUS_CODES[status] ?? 'error').toLowerCase()];
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: jsonLine({ code, http: status, error }) };
}

/** The open streams, the topics' subscribers, and what tests make them do. */
export class Streams {
  /** While true, no stream gets any line (keepalives tick on and are dropped). */
  silent = false;
  impostor: Impostor | undefined;
  private readonly open = new Set<Stream>();
  private refusal: { reply: Reply; remaining: number } | undefined;
  /** When each UnifiedPush topic last had a subscriber (a stream accepted, or one ended): kept across a restart. */
  private readonly subscribedAt = new Map<string, number>();

  constructor(
    private readonly keepaliveMs: number,
    private readonly nowMs: () => number,
  ) {}

  /** A subscription to the topic was accepted, or one ended. */
  seen(topic: string): void {
    if (UNIFIED_PUSH_TOPIC.test(topic)) {
      this.subscribedAt.set(topic, this.nowMs());
    }
  }

  /** Whether a UnifiedPush publish to the topic is taken: it has a stream, or had one within a day. */
  takesUnifiedPush(topic: string): boolean {
    const seenAt = this.subscribedAt.get(topic);
    return UNIFIED_PUSH_TOPIC.test(topic) && (this.count(topic) > 0 || (seenAt !== undefined && this.nowMs() - seenAt < SUBSCRIBER_MEMORY_MS));
  }

  /**
   * Opens a JSON stream of the topic: an `open` line, then `lines` (what was cached for it), then each
   * line broadcast to the topic, and a `keepalive` line every keepaliveMs. ntfy registers a stream
   * before it sends what was cached, as here.
   */
  follow(response: ServerResponse, topic: string, lines: string[]): void {
    const eventLine = (event: 'open' | 'keepalive') => jsonLine({ id: randomId(), time: Math.floor(this.nowMs() / 1000), event, topic });
    const send = this.start(response, topic, () => eventLine('keepalive'), STREAM_HEADERS);
    [eventLine('open'), ...lines].forEach(send);
  }

  /** Sends the headers at once, so that the client learns the stream is open even while the relay is silent. */
  private start(response: ServerResponse, topic: string | undefined, keepaliveLine: () => string, headers: Record<string, string>): (line: string) => void {
    response.writeHead(200, headers);
    response.flushHeaders();
    const stream: Stream = { topic, response, keepalive: setInterval(() => this.send(stream, keepaliveLine()), this.keepaliveMs) };
    this.open.add(stream);
    // The client hung up or the socket broke; an 'error' from a write racing a hang-up is handled the same.
    response.once('close', () => this.forget(stream));
    response.on('error', () => this.forget(stream));
    return (line) => this.send(stream, line);
  }

  count(topic: string): number {
    return this.following(topic).length;
  }

  /** Writes `line` (with its '\n') to every stream of the topic. */
  broadcast(topic: string, line: string): void {
    this.following(topic).forEach((stream) => this.send(stream, line));
  }

  /** As a network break: the connection reset, without the end of the chunked body. */
  dropAll(): void {
    for (const stream of [...this.open]) {
      this.forget(stream);
      stream.response.socket?.destroy();
    }
  }

  /** As a server shutting down: each chunked body ends properly. */
  endAll(): void {
    for (const stream of [...this.open]) {
      this.forget(stream);
      stream.response.end();
    }
  }

  refuse({ status, retryAfter, times = 1 }: SubscribeRefusal): void {
    if (!(Number.isInteger(status) && status >= 400 && status <= 599 && Number.isInteger(times) && times >= 0)) {
      throw new TypeError('subscription refusal: status must be 400-599 and times an integer >= 0');
    }
    this.refusal = { reply: errorReply(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }), remaining: times };
  }

  /** What a subscribe request gets instead of a stream (a refusal first, then an impostor), as from a proxy in front; undefined to go on. */
  intercept(): Reply | StreamStart | undefined {
    if (this.refusal !== undefined && this.refusal.remaining > 0) {
      this.refusal.remaining -= 1;
      return this.refusal.reply;
    }
    if (this.impostor === 'web-page') {
      return { status: 200, headers: HTML_HEADERS, body: PORTAL_PAGE };
    }
    if (this.impostor === 'trickle') {
      // It follows no topic, so nothing published or injected reaches it; dropStreams and stop end it.
      return { status: 200, start: (response) => this.start(response, undefined, () => TRICKLE, HTML_HEADERS)(TRICKLE) };
    }
    return undefined;
  }

  /** node:http sends each write as a chunk at once. */
  private send(stream: Stream, line: string): void {
    if (!this.silent && this.open.has(stream)) {
      stream.response.write(line);
    }
  }

  private following(topic: string): Stream[] {
    return [...this.open].filter((stream) => stream.topic === topic);
  }

  private forget(stream: Stream): void {
    if (this.open.delete(stream)) {
      clearInterval(stream.keepalive);
      if (stream.topic !== undefined) {
        this.seen(stream.topic);
      }
    }
  }
}
