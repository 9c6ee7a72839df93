import { describe, expect, it } from '@jest/globals';
import { isRelayEvent, LineSplitter, MAX_LINE_BYTES, parseRelayLine } from '../../../src/push/relay/stream.js';

describe('parseRelayLine', () => {
  it("reads open and keepalive as signs of life, with the relay's time", () => {
    expect(parseRelayLine('{"id":"a1","time":1700000000,"event":"open","topic":"upabc"}')).toEqual({ kind: 'alive', time: 1700000000 });
    expect(parseRelayLine('{"id":"a2","time":1700000045,"event":"keepalive","topic":"upabc"}')).toEqual({ kind: 'alive', time: 1700000045 });
  });

  it('calls an open or keepalive without an id or a numeric time a bad line, no sign of life', () => {
    expect(parseRelayLine('{"id":"a1","event":"open","topic":"upabc"}')).toEqual({ kind: 'bad', reason: 'open event without an id or a time' });
    expect(parseRelayLine('{"id":"a2","time":"1700000045","event":"keepalive"}')).toEqual({ kind: 'bad', reason: 'keepalive event without an id or a time' });
    expect(parseRelayLine('{"time":1700000045,"event":"keepalive"}')).toEqual({ kind: 'bad', reason: 'keepalive event without an id or a time' });
    expect(parseRelayLine('{"id":"","time":1700000045,"event":"open"}')).toEqual({ kind: 'bad', reason: 'open event without an id or a time' });
  });

  it('takes only well-formed open, keepalive and message events as proof of a relay', () => {
    const proof = (line: string | undefined) => isRelayEvent(parseRelayLine(line));
    expect(proof('{"id":"a1","time":1,"event":"open"}')).toBe(true);
    expect(proof('{"id":"m1","time":1,"event":"message","message":"x"}')).toBe(true);
    expect(proof('{"id":"p","time":1,"event":"poll_request"}')).toBe(false);
    expect(proof('<!DOCTYPE html>')).toBe(false);
    expect(proof(undefined)).toBe(false);
  });

  it('reads a message with its id, time and body, tolerating other keys', () => {
    const line = JSON.stringify({ id: 'm1', time: 1700000000, expires: 1700043200, event: 'message', topic: 't', message: '{"a":1}', title: 'x' });
    expect(parseRelayLine(line)).toEqual({ kind: 'message', id: 'm1', time: 1700000000, body: Buffer.from('{"a":1}') });
  });

  it('decodes a base64 message', () => {
    const line = JSON.stringify({ id: 'm2', time: 1, event: 'message', topic: 't', message: Buffer.from([0xff, 0x00, 0x7b]).toString('base64'), encoding: 'base64' });
    expect(parseRelayLine(line)).toEqual({ kind: 'message', id: 'm2', time: 1, body: Buffer.from([0xff, 0x00, 0x7b]) });
  });

  it('ignores events it does not know, such as poll_request', () => {
    expect(parseRelayLine('{"id":"p","time":1,"event":"poll_request","topic":"t","message":"New message"}')).toEqual({ kind: 'ignored' });
  });

  it.each([
    ['not JSON', 'not json', 'line is not JSON'],
    ['a JSON array', '[1]', 'line is not an event object'],
    ['no event', '{"id":"x"}', 'line is not an event object'],
    ['a message without an id', '{"event":"message","time":1,"message":"{}"}', 'message event without an id, a time or a message'],
    ['a message with a string time', '{"event":"message","id":"x","time":"1","message":"{}"}', 'message event without an id, a time or a message'],
    ['a message without a message', '{"event":"message","id":"x","time":1}', 'message event without an id, a time or a message'],
    ['bad base64', '{"event":"message","id":"x","time":1,"message":"%%%","encoding":"base64"}', 'message is not base64'],
    ['an unknown encoding', '{"event":"message","id":"x","time":1,"message":"a","encoding":"gzip"}', 'message has an unknown encoding'],
  ])('calls %s a bad line, without quoting it', (_name, line, reason) => {
    expect(parseRelayLine(line)).toEqual({ kind: 'bad', reason });
  });
});

describe('LineSplitter', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('hands out lines as they complete, across chunks and split characters, skipping blank lines', () => {
    const splitter = new LineSplitter();
    const euro = bytes('€');
    expect(splitter.push(bytes('{"a":'))).toEqual([]);
    expect(splitter.push(Uint8Array.of(...bytes('1}\n\n{"b":"'), euro[0]))).toEqual(['{"a":1}']);
    expect(splitter.push(Uint8Array.of(euro[1], euro[2], ...bytes('"}\n')))).toEqual(['{"b":"€"}']);
  });

  it('reports an overlong line once and drops it whole, then carries on', () => {
    const splitter = new LineSplitter();
    const chunk = 'x'.repeat(MAX_LINE_BYTES / 2);
    const reported = [...splitter.push(bytes(chunk)), ...splitter.push(bytes(chunk)), ...splitter.push(bytes(chunk))];
    expect(reported).toEqual([undefined]);
    expect(splitter.push(bytes(`${chunk}\n{"ok":1}\n`))).toEqual(['{"ok":1}']);
  });
});
