import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { writeReply } from '../incoming.js';
import type { Reply } from '../incoming.js';
import type { AccessControl } from './access.js';
import { readBoundedBytes } from './body.js';
import type { PeekedBody } from './body.js';
import { FORBIDDEN, INTERNAL_ERROR, NOT_FOUND, UNAUTHORIZED, errorReply } from './errors.js';
import { MESSAGE_SIZE_LIMIT } from './message-body.js';
import { RequestParams, UNIFIED_PUSH_PARAM } from './params.js';
import type { RefusalSlot } from './refusals.js';
import { matchRelayRoute } from './routes.js';
import type { RelayRoute } from './routes.js';
import type { StreamStart } from './subscribe.js';
import type { RelayRequest } from './types.js';

export interface RelayHandlerContext {
  /** Every request is appended on arrival; its status is set just before the answer goes out. */
  requests: RelayRequest[];
  access: AccessControl;
  refusals: RefusalSlot;
  /** Set by the test: subscribe requests are answered by something that is no relay. */
  impostor(): Reply | StreamStart | undefined;
  subscribe(route: Extract<RelayRoute, { kind: 'subscribe' }>, params: RequestParams): Reply | StreamStart;
  publish(topic: string, body: PeekedBody, unifiedPush: boolean): Reply;
}

export function createRelayHandler(context: RelayHandlerContext): RequestListener {
  return (message, response) => {
    // Last line of defence: whatever goes wrong, the relay drops the connection rather than crash.
    handleRequest(message, response, context).catch(() => message.socket.destroy());
  };
}

async function handleRequest(message: IncomingMessage, response: ServerResponse, context: RelayHandlerContext): Promise<void> {
  const target = message.url ?? '';
  const queryStart = target.indexOf('?');
  const request: RelayRequest = {
    method: message.method ?? '',
    path: queryStart === -1 ? target : target.slice(0, queryStart),
    rawQuery: queryStart === -1 ? '' : target.slice(queryStart + 1),
    headers: { ...message.headers },
    status: 0,
  };
  context.requests.push(request);
  let body: PeekedBody;
  try {
    // Every body is read, within the bound, so that a keep-alive connection stays usable.
    body = await readBoundedBytes(message, MESSAGE_SIZE_LIMIT);
  } catch {
    return; // The client went away mid-body: nobody is left to answer.
  }
  const answer = answerRequest(request, message, body, context);
  request.status = answer.status;
  if ('start' in answer) {
    answer.start(response);
  } else {
    writeReply(response, answer);
  }
}

/**
 * Checks in ntfy's order: unknown credentials are refused on any path, an unknown path is a 404, a
 * request without credentials is refused once it names a topic. A refusal or an impostor set by the
 * test comes first, as from a proxy in front of the relay.
 */
function answerRequest(request: RelayRequest, message: IncomingMessage, body: PeekedBody, context: RelayHandlerContext): Reply | StreamStart {
  try {
    const route = matchRelayRoute(request.method, request.path);
    const intercepted = route?.kind === 'subscribe' ? (context.refusals.take() ?? context.impostor()) : undefined;
    if (intercepted !== undefined) {
      return intercepted;
    }
    const access = context.access.check(message.headers);
    if (access === 'unknown') {
      return errorReply(UNAUTHORIZED);
    }
    if (route === undefined) {
      return errorReply(NOT_FOUND);
    }
    if (access === 'anonymous') {
      return errorReply(FORBIDDEN);
    }
    const params = new RequestParams(message.headers, request.rawQuery);
    if (route.kind === 'subscribe') {
      return context.subscribe(route, params);
    }
    return context.publish(route.topic, body, params.readBool(UNIFIED_PUSH_PARAM));
  } catch {
    // A relay bug: answered as ntfy answers its own, so the test sees a 500 rather than a hang.
    return errorReply(INTERNAL_ERROR);
  }
}
