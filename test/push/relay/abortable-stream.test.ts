/**
 * An abort ends the waits on an HTTP answer and on the relay's stream even when the client no longer
 * heeds its signal, as Node's fetch can after garbage collection: here the request and the body
 * simply never heed it.
 */
import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { readUntilAborted, responseUnlessAborted } from '../../../src/push/relay/stream.js';

/** A stream that delivers `chunks`, then neither delivers nor ends, as a relay that fell silent. */
function stalledStream(chunks: string[] = []): Readable {
  const stream = new Readable({ read: () => undefined });
  chunks.forEach((chunk) => stream.push(Buffer.from(chunk)));
  return stream;
}

/** A body that delivers `chunks`, then neither delivers nor ends; it records being cancelled. */
function stalledBody(chunks: string[] = []): { body: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  const queue = chunks.map((chunk) => new TextEncoder().encode(chunk));
  const body = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      const next = queue.shift();
      return next === undefined ? new Promise(() => undefined) : controller.enqueue(next);
    },
    cancel: () => {
      cancelled = true;
    },
  });
  return { body, cancelled: () => cancelled };
}

describe('responseUnlessAborted', () => {
  it('rejects with the reason as soon as the signal aborts, though the request never settles', async () => {
    const controller = new AbortController();
    const waiting = responseUnlessAborted(new Promise<Response>(() => undefined), controller.signal);
    controller.abort(new Error('silent'));
    await expect(waiting).rejects.toThrow('silent');
  });

  it('cancels the body of a response that arrives after the abort, closing its connection', async () => {
    const controller = new AbortController();
    const { body, cancelled } = stalledBody();
    let answer: (response: Response) => void = () => undefined;
    const waiting = responseUnlessAborted(new Promise<Response>((resolve) => (answer = resolve)), controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    answer(new Response(body));
    await new Promise((resolve) => setImmediate(resolve));
    expect(cancelled()).toBe(true);
  });

  it('passes the response and a failure through while the signal is not aborted', async () => {
    const signal = new AbortController().signal;
    const response = new Response('ok', { status: 201 });
    await expect(responseUnlessAborted(Promise.resolve(response), signal)).resolves.toBe(response);
    await expect(responseUnlessAborted(Promise.reject(new Error('refused')), signal)).rejects.toThrow('refused');
  });
});

describe('readUntilAborted', () => {
  it('hands over each chunk, then ends on an abort by destroying the stream, though the stream never ends', async () => {
    const controller = new AbortController();
    const body = stalledStream(['a', 'b']);
    const chunks: string[] = [];
    const reading = readUntilAborted(body, controller.signal, (chunk) => chunks.push(chunk.toString()));
    // A stream may hand over what it holds as one chunk: the text is what counts. Bounded, like every wait.
    for (let turns = 0; chunks.join('') !== 'ab' && turns < 1_000; turns += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    controller.abort(new Error('nothing arrived'));
    await expect(reading).rejects.toThrow('nothing arrived');
    expect(chunks.join('')).toBe('ab');
    expect(body.destroyed).toBe(true);
  });

  it('destroys the stream at once when the signal aborted before reading began', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    const body = stalledStream(['a']);
    const chunks: Buffer[] = [];
    await expect(readUntilAborted(body, controller.signal, (chunk) => chunks.push(chunk))).rejects.toThrow('stopped');
    expect(chunks).toEqual([]);
    expect(body.destroyed).toBe(true);
  });

  it('resolves when the stream ends by itself', async () => {
    const chunks: string[] = [];
    await readUntilAborted(Readable.from([Buffer.from('line\n')]), new AbortController().signal, (chunk) => chunks.push(chunk.toString()));
    expect(chunks).toEqual(['line\n']);
  });
});
