import { isUtf8 } from 'node:buffer';
import type { PeekedBody } from './body.js';
import { ATTACHMENTS_DISALLOWED } from './errors.js';
import type { NtfyError } from './errors.js';
import type { RelayMessage } from './types.js';

/** ntfy's `message-size-limit` default: it reads no more of a body than this. */
export const MESSAGE_SIZE_LIMIT = 4096;

/** What ntfy stores for an empty body. */
const EMPTY_BODY_MESSAGE = 'triggered';

/** Go's strings.TrimSpace trims Unicode white space: NEL and NBSP go, a byte order mark stays (unlike String.prototype.trim). */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const GO_TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'g');

export type MessageBody = Pick<RelayMessage, 'message' | 'encoding'>;

/**
 * The message a publish body becomes, as ntfy decides it (https://docs.ntfy.sh/publish/#unifiedpush):
 * The body is peeked at up to MESSAGE_SIZE_LIMIT bytes.
 * UnifiedPush: the text as sent, or its base64 when it is not UTF-8; what lies past the limit is lost.
 * Otherwise: the trimmed text, unless the body is too long or not UTF-8, when ntfy would store it as an
 * attachment, which this relay (as an ntfy without an attachment cache) refuses.
 */
export function messageBody({ bytes, overflowed }: PeekedBody, unifiedPush: boolean): MessageBody | NtfyError {
  if (unifiedPush) {
    return isUtf8(bytes) ? withDefault(bytes.toString('utf8')) : { message: bytes.toString('base64'), encoding: 'base64' };
  }
  if (overflowed || !isUtf8(bytes)) {
    return ATTACHMENTS_DISALLOWED;
  }
  return withDefault(bytes.toString('utf8').replace(GO_TRIM, ''));
}

function withDefault(text: string): MessageBody {
  return { message: text === '' ? EMPTY_BODY_MESSAGE : text };
}

/** A body given in-process, cut as the relay would read it off the wire. */
export function peekBody(body: string | Buffer): PeekedBody {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return { bytes: bytes.subarray(0, MESSAGE_SIZE_LIMIT), overflowed: bytes.length > MESSAGE_SIZE_LIMIT };
}
