/**
 * An abort ends the waits on a streaming fetch even when fetch no longer heeds its signal, as Node's
 * fetch can after garbage collection: here the request and the body simply never heed it.
 */
import { describe, expect, it } from '@jest/globals';
import { readUntilAborted, responseUnlessAborted } from '../../src/push/abortable-stream.js';

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
  it('hands over each chunk, then ends on an abort by cancelling the body, though the body never ends', async () => {
    const controller = new AbortController();
    const { body, cancelled } = stalledBody(['a', 'b']);
    const chunks: string[] = [];
    const reading = readUntilAborted(body, controller.signal, (chunk) => chunks.push(new TextDecoder().decode(chunk)));
    while (chunks.length < 2) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    controller.abort(new Error('nothing arrived'));
    await expect(reading).rejects.toThrow('nothing arrived');
    expect(chunks).toEqual(['a', 'b']);
    expect(cancelled()).toBe(true);
  });

  it('cancels the body at once when the signal aborted before reading began', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    const { body, cancelled } = stalledBody(['a']);
    const chunks: Uint8Array[] = [];
    await expect(readUntilAborted(body, controller.signal, (chunk) => chunks.push(chunk))).rejects.toThrow('stopped');
    expect(chunks).toEqual([]);
    expect(cancelled()).toBe(true);
  });

  it('resolves when the body ends by itself', async () => {
    const chunks: string[] = [];
    await readUntilAborted(new Response('line\n').body!, new AbortController().signal, (chunk) => chunks.push(new TextDecoder().decode(chunk)));
    expect(chunks).toEqual(['line\n']);
  });
});
