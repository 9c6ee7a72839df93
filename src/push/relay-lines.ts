import { isJsonObject, isNonEmptyString } from '../values/json.js';

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
