import type { Readable } from 'node:stream';

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
