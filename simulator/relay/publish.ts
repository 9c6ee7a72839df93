import type { Reply } from '../incoming.js';
import type { PeekedBody } from './body.js';
import type { MessageCache } from './cache.js';
import { CORS_HEADERS, NO_RATE_VISITOR, errorReply } from './errors.js';
import type { NtfyError } from './errors.js';
import { goJsonLine } from './go-json.js';
import { randomMessageId } from './ids.js';
import { messageBody } from './message-body.js';
import type { RateVisitors } from './rate-visitors.js';
import type { StreamRegistry } from './streams.js';
import type { RelayMessage } from './types.js';

export interface PublishContext {
  cache: MessageCache;
  streams: StreamRegistry;
  rateVisitors: RateVisitors;
  subscriberRateLimiting: boolean;
  /** Added to a message's time for its `expires`, in whole seconds as ntfy counts it. */
  cacheSeconds: number;
  nowMs(): number;
}

export type PublishOutcome = { message: RelayMessage } | { error: NtfyError };

/**
 * A publish, checked in ntfy's order: the UnifiedPush subscriber first, then the body. A message is
 * cached and written to every open stream of its topic before the publisher hears back.
 */
export function publishMessage(context: PublishContext, topic: string, peeked: PeekedBody, unifiedPush: boolean): PublishOutcome {
  if (unifiedPush && context.subscriberRateLimiting && !context.rateVisitors.has(topic)) {
    return { error: NO_RATE_VISITOR };
  }
  const body = messageBody(peeked, unifiedPush);
  if ('error' in body) {
    return { error: body };
  }
  const time = Math.floor(context.nowMs() / 1000);
  // Fields in the order ntfy writes them.
  const message: RelayMessage = { id: randomMessageId(), time, expires: time + context.cacheSeconds, event: 'message', topic, ...body };
  context.cache.add(message);
  context.streams.broadcast(topic, goJsonLine(message));
  return { message };
}

/** ntfy answers a publish with the message, as JSON. */
export function publishReply(outcome: PublishOutcome): Reply {
  if ('error' in outcome) {
    return errorReply(outcome.error);
  }
  return { status: 200, headers: { 'content-type': 'application/json', ...CORS_HEADERS }, body: goJsonLine(outcome.message) };
}
