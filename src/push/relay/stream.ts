import type { Readable } from 'node:stream';
import { axios } from '../../cloud/http.js';
import { isJsonObject, isNonEmptyString } from '../../values/json.js';

/**
 * The relay stream as it is read: the request that opens it, the waits an abort always ends, and its
 * lines.
 */

/**
 * Waiting on an HTTP answer or stream in a way an abort always ends, whatever the HTTP client does
 * with the signal it was given too. A client that loses the link between the signal and its request
 * (Node's fetch can, under garbage-collection pressure: docs/architecture.md) would otherwise leave
 * a relay stream that fell silent undropped, and a shutdown waiting on it for ever. So the abort also
 * ends the waits here, which hold what they wait on themselves.
 */

/**
 * The answer, or a rejection with the signal's reason as soon as it aborts, whether or not the client
 * heeds it. An answer that still arrives after the abort goes to `discard`, which closes its connection.
 */
export function answerUnlessAborted<T>(request: Promise<T>, signal: AbortSignal, discard: (late: T) => void): Promise<T> {
  const discardLate = () => void request.then(discard, () => undefined);
  if (signal.aborted) {
    discardLate();
    return Promise.reject(signal.reason as Error);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      discardLate();
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.then(
      (answer) => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/** A fetch answer, as the settings page's test motion waits for it; a late one has its body cancelled. */
export function responseUnlessAborted(request: Promise<Response>, signal: AbortSignal): Promise<Response> {
  return answerUnlessAborted(request, signal, (response) => void response.body?.cancel().catch(() => undefined));
}

/**
 * Hands each chunk of the relay's stream until the body ends. An abort destroys the body, which this
 * function holds, so the wait ends and the connection closes; it then rejects with the signal's reason.
 */
export async function readUntilAborted(body: Readable, signal: AbortSignal, onChunk: (chunk: Buffer) => void): Promise<void> {
  const destroy = () => body.destroy();
  signal.addEventListener('abort', destroy, { once: true });
  try {
    signal.throwIfAborted();
    for await (const chunk of body as AsyncIterable<Buffer>) {
      onChunk(chunk);
    }
  } catch (error) {
    // A stream destroyed by the abort breaks off reading: the abort is what happened.
    signal.throwIfAborted();
    throw error;
  } finally {
    signal.removeEventListener('abort', destroy);
    body.destroy();
  }
  signal.throwIfAborted();
}

/**
 * The relay's subscribe stream (ntfy's JSON stream): one JSON object per line. `open` and `keepalive`
 * only prove the stream is alive; `message` carries a notification; anything else is ignored. All
 * three carry an `id` and the relay's `time` (unix seconds), which is how the client learns the
 * relay's clock. Only these three events, well formed, are what an ntfy relay writes: a line without
 * them (a web page's, a proxy's) proves nothing.
 */

/**
 * The longest line kept. A relay message holds at most a few KiB (ntfy: 4,096 bytes, a third more as
 * base64); a longer line is dropped rather than buffered without end.
 */
export const MAX_LINE_BYTES = 64 * 1024;

export type RelayLine =
  /** `time`: when the relay wrote the line, by its clock. */
  | { kind: 'alive'; time: number }
  | { kind: 'message'; id: string; time: number; body: Buffer }
  | { kind: 'ignored' }
  | { kind: 'bad'; reason: string };

const ALIVE_EVENTS = new Set(['open', 'keepalive']);

/** Reads one line (undefined: one too long, see LineSplitter); never throws, and a reason never quotes the line. */
export function parseRelayLine(line: string | undefined): RelayLine {
  if (line === undefined) {
    return { kind: 'bad', reason: 'line too long' };
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'bad', reason: 'line is not JSON' };
  }
  if (!isJsonObject(value) || typeof value.event !== 'string') {
    return { kind: 'bad', reason: 'line is not an event object' };
  }
  if (ALIVE_EVENTS.has(value.event)) {
    return isNonEmptyString(value.id) && isUnixTime(value.time)
      ? { kind: 'alive', time: value.time }
      : { kind: 'bad', reason: `${value.event} event without an id or a time` };
  }
  if (value.event !== 'message') {
    return { kind: 'ignored' };
  }
  return parseMessage(value);
}

/** An event only an ntfy relay writes, well formed: proof that the stream is alive. */
export function isRelayEvent(line: RelayLine): boolean {
  return line.kind === 'alive' || line.kind === 'message';
}

function parseMessage(value: Record<string, unknown>): RelayLine {
  const { id, time, message, encoding } = value;
  if (!isNonEmptyString(id) || !isUnixTime(time) || typeof message !== 'string') {
    return { kind: 'bad', reason: 'message event without an id, a time or a message' };
  }
  if (encoding === 'base64') {
    return /^[A-Za-z0-9+/]*={0,2}$/.test(message)
      ? { kind: 'message', id, time, body: Buffer.from(message, 'base64') }
      : { kind: 'bad', reason: 'message is not base64' };
  }
  if (encoding !== undefined && encoding !== '') {
    return { kind: 'bad', reason: 'message has an unknown encoding' };
  }
  return { kind: 'message', id, time, body: Buffer.from(message, 'utf8') };
}

function isUnixTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * Splits a byte stream into lines, as they complete. A line longer than MAX_LINE_BYTES is reported
 * as `undefined` (once) and its bytes dropped up to the next newline.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8');
  private pending = '';
  private overflowing = false;

  push(chunk: Uint8Array): Array<string | undefined> {
    const lines: Array<string | undefined> = [];
    const parts = (this.pending + this.decoder.decode(chunk, { stream: true })).split('\n');
    this.pending = parts.pop() ?? '';
    for (const part of parts) {
      // The end of an overlong line, already reported, is dropped with it.
      if (!this.overflowing) {
        lines.push(part);
      }
      this.overflowing = false;
    }
    if (Buffer.byteLength(this.pending) > MAX_LINE_BYTES) {
      if (!this.overflowing) {
        lines.push(undefined);
      }
      this.overflowing = true;
      this.pending = '';
    }
    return lines.filter((line) => line === undefined || line.trim() !== '');
  }
}

/** The relay's answer to a subscribe request: its status, and the stream of lines when it is 200. */
export interface RelayAnswer {
  status: number;
  retryAfter: string | undefined;
  /** Ended by the relay, or destroyed when the signal aborts. */
  body: Readable;
}

/** One subscribe request: the topic and the token are secrets; `since` an id or a unix time. */
export interface RelayStreamRequest {
  relayUrl: string;
  topic: string;
  token?: string;
  since?: string;
}

/**
 * `GET` of the relay's stream with the plugin's HTTP client. Every status is answered, for the caller
 * to judge; a redirect is not followed (it would carry the topic and the token to an address nobody
 * checked); nothing is decompressed or buffered, so each line is read as soon as it arrives; no proxy
 * from the environment, as before; no timeout, as a silent stream is the caller's watchdog's to end.
 */
export async function requestRelayStream(stream: RelayStreamRequest, signal: AbortSignal): Promise<RelayAnswer> {
  const { relayUrl, topic, token, since } = stream;
  const url = `${relayUrl}/${topic}/json${since === undefined ? '' : `?since=${encodeURIComponent(since)}`}`;
  // Uncompressed: a compressing proxy in front of the relay could hold lines back to fill a block.
  const identity = { 'Accept-Encoding': 'identity' };
  const response = await axios.get<Readable>(url, {
    headers: token === undefined ? identity : { ...identity, Authorization: `Bearer ${token}` },
    signal,
    responseType: 'stream',
    validateStatus: () => true,
    maxRedirects: 0,
    decompress: false,
    proxy: false,
  });
  const retryAfter = response.headers['retry-after'];
  return { status: response.status, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, body: response.data };
}
