/** The text of a stream, keeping at most `limit` bytes, so no peer can make the simulator hoard memory. */
export async function readBoundedText(stream: AsyncIterable<Buffer>, limit: number): Promise<{ text: string; overflowed: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size <= limit) {
      chunks.push(chunk);
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), overflowed: size > limit };
}
