import type { ServerResponse } from 'node:http';
import type { Reply } from '../incoming.js';
import type { MessageCache } from './cache.js';
import { CORS_HEADERS, SINCE_INVALID, errorReply } from './errors.js';
import { goJsonLine } from './go-json.js';
import { randomMessageId } from './ids.js';
import { POLL_PARAM, SINCE_PARAM } from './params.js';
import type { RequestParams } from './params.js';
import type { RateVisitors } from './rate-visitors.js';
import type { RelayRoute } from './routes.js';
import { parseSince } from './since.js';
import type { Since } from './since.js';
import type { StreamRegistry } from './streams.js';

export interface SubscribeContext {
  cache: MessageCache;
  streams: StreamRegistry;
  rateVisitors: RateVisitors;
  nowMs(): number;
}

/** A stream to open: the answer's status is 200 once `start` has sent the headers. */
export interface StreamStart {
  status: 200;
  start(response: ServerResponse): void;
}

type SubscribeRoute = Extract<RelayRoute, { kind: 'subscribe' }>;

/** The charset is there because ntfy's Android client needs it. */
const STREAM_HEADERS = { 'content-type': 'application/x-ndjson; charset=utf-8', ...CORS_HEADERS };

/**
 * `GET /<topics>/json`, as ntfy's subscribe API (https://docs.ntfy.sh/subscribe/api/): with `poll=1`
 * the cached messages and the end of the answer; otherwise a stream of an `open` line, the cached
 * messages `since` asks for, then every message published to its topics, and a `keepalive` line every
 * so often. ntfy registers the stream before sending what was cached, as here.
 */
export function answerSubscribe(context: SubscribeContext, route: SubscribeRoute, params: RequestParams): Reply | StreamStart {
  const poll = params.readBool(POLL_PARAM);
  const since = parseSince(params.read(SINCE_PARAM), poll, context.nowMs());
  if (since === undefined) {
    return errorReply(SINCE_INVALID);
  }
  context.rateVisitors.seen(route.topics);
  if (poll) {
    return { status: 200, headers: STREAM_HEADERS, body: cachedLines(context, route, since).join('') };
  }
  return { status: 200, start: (response) => openStream(context, route, since, response) };
}

function openStream(context: SubscribeContext, route: SubscribeRoute, since: Since, response: ServerResponse): void {
  response.writeHead(200, STREAM_HEADERS);
  // The client learns the stream is open even while the relay is silent.
  response.flushHeaders();
  const eventLine = (event: 'open' | 'keepalive'): string =>
    goJsonLine({ id: randomMessageId(), time: Math.floor(context.nowMs() / 1000), event, topic: route.topicsText });
  const stream = context.streams.open(route.topics, response, () => eventLine('keepalive'));
  stream.send(eventLine('open'));
  for (const line of cachedLines(context, route, since)) {
    stream.send(line);
  }
}

function cachedLines(context: SubscribeContext, route: SubscribeRoute, since: Since): string[] {
  return context.cache.select(route.topics, since).map(goJsonLine);
}
