/**
 * Waiting on a streaming fetch in a way an abort always ends. Passing the signal to fetch is not
 * enough on its own: under garbage-collection pressure Node's fetch can lose the link between the
 * signal it was given and the request it made (docs/architecture.md). The abort then neither
 * settles the request nor ends its body, so a relay stream that fell silent would never be dropped
 * and a shutdown would wait on it for ever. So the abort also ends the waits here, which hold what
 * they wait on themselves.
 */

/**
 * The response, or a rejection with the signal's reason as soon as it aborts, whether or not fetch
 * heeds it. A response that still arrives after the abort has its body cancelled, which closes its
 * connection.
 */
export function responseUnlessAborted(request: Promise<Response>, signal: AbortSignal): Promise<Response> {
  if (signal.aborted) {
    void request.then(discard, () => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      void request.then(discard, () => undefined);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.then(
      (response) => {
        signal.removeEventListener('abort', onAbort);
        resolve(response);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/**
 * Hands each chunk of `body` to `onChunk` until the body ends. An abort cancels the reader, which
 * this function holds, so the wait ends and the connection closes; it then rejects with the signal's
 * reason.
 */
export async function readUntilAborted(body: ReadableStream<Uint8Array>, signal: AbortSignal, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    if (signal.aborted) {
      cancel();
      signal.throwIfAborted();
    }
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      onChunk(chunk.value);
    }
    // A cancelled reader reads as the end of the body: it ended because of the abort.
    signal.throwIfAborted();
  } finally {
    signal.removeEventListener('abort', cancel);
    reader.releaseLock();
  }
}

function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined);
}
