/** The start of a body, as far as it was kept, and whether more was sent. */
export interface PeekedBody {
  bytes: Buffer;
  overflowed: boolean;
}

/**
 * The first `limit` bytes of a stream, the rest read and dropped, as ntfy peeks at a publish body: the
 * bytes themselves matter (UTF-8 or not), so the simulator's text reader cannot serve here.
 */
export async function readBoundedBytes(stream: AsyncIterable<Buffer>, limit: number): Promise<PeekedBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const room = limit - size;
    if (room > 0) {
      chunks.push(chunk.subarray(0, room));
    }
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks), overflowed: size > limit };
}
