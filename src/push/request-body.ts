import type { IncomingMessage } from 'node:http';

/** Reading a request body within a byte limit, for the push receiver. */

export type BodyResult = { kind: 'complete'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the body, counting bytes as they arrive and stopping at the first byte past the limit, so
 * neither a lying Content-Length nor a chunked body can make it buffer more than `limit`.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  if (Number(req.headers['content-length'] ?? 0) > limit) {
    return Promise.resolve({ kind: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (result: BodyResult): void => {
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length > limit) {
        req.pause();
        finish({ kind: 'too-large' });
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => finish({ kind: 'complete', body: Buffer.concat(chunks, length) });
    const onClose = (): void => finish({ kind: 'aborted' });
    req.on('data', onData).on('end', onEnd).on('close', onClose);
  });
}

/** `application/json`, with or without parameters such as `; charset=utf-8`. */
export function isJsonContentType(contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

export function decodeUtf8(body: Buffer): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}
