import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { readBoundedText } from './bounded-read.js';
import type { SimulatedService } from './types.js';

/** Nothing the services accept comes close; a larger body is cut off and refused. */
const MAX_BODY_BYTES = 64 * 1024;

/** One request as the simulator judges it: fully read, with the raw forms strictness needs. */
export interface IncomingRequest {
  service: SimulatedService;
  method: string;
  /** Without the query string, still percent-encoded. */
  path: string;
  /** Without '?', '' when absent. */
  rawQuery: string;
  headers: IncomingHttpHeaders;
  /** Names and values as sent, alternating: node:http joins repeated headers in `headers`. */
  rawHeaders: string[];
  body: string;
  bodyTooLarge: boolean;
  remoteAddress: string | undefined;
}

export async function readIncoming(service: SimulatedService, message: IncomingMessage): Promise<IncomingRequest> {
  const body = await readBoundedText(message, MAX_BODY_BYTES);
  const target = message.url ?? '';
  const queryStart = target.indexOf('?');
  return {
    service,
    method: message.method ?? '',
    path: queryStart === -1 ? target : target.slice(0, queryStart),
    rawQuery: queryStart === -1 ? '' : target.slice(queryStart + 1),
    headers: message.headers,
    rawHeaders: message.rawHeaders,
    body: body.text,
    bodyTooLarge: body.overflowed,
    remoteAddress: message.socket.remoteAddress,
  };
}

/** Every value sent for one header, one entry per header line. */
export function headerValues(request: IncomingRequest, name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index].toLowerCase() === name) {
      values.push(request.rawHeaders[index + 1]);
    }
  }
  return values;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** What a route answers: a reply, or a connection reset with no reply at all. */
export type Answer = Reply | 'reset';

export function jsonReply(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) };
}

export function emptyReply(status: number): Reply {
  return { status };
}

/** RFC 9110 forbids Content-Length on these statuses. */
const BODILESS_STATUSES = new Set([204, 304]);

export function writeReply(response: ServerResponse, reply: Reply): void {
  const body = BODILESS_STATUSES.has(reply.status) ? '' : (reply.body ?? '');
  const headers: Record<string, string | number> = { ...reply.headers };
  if (!BODILESS_STATUSES.has(reply.status)) {
    headers['content-length'] = Buffer.byteLength(body);
  }
  response.writeHead(reply.status, headers);
  response.end(body);
}
