import type { ServerResponse } from 'node:http';

/** One open `GET /<topics>/json` stream. */
class OpenStream {
  private readonly keepalive: NodeJS.Timeout;
  private ended = false;

  constructor(
    readonly topics: ReadonlySet<string>,
    private readonly response: ServerResponse,
    private readonly registry: StreamRegistry,
    keepaliveMs: number,
    keepaliveLine: () => string,
  ) {
    this.keepalive = setInterval(() => this.send(keepaliveLine()), keepaliveMs);
    // The client hung up, or the socket was destroyed: either way the stream is gone.
    response.once('close', () => this.forget());
    // A write racing a hang-up must not become an unhandled 'error' event.
    response.on('error', () => this.forget());
  }

  /** Writes one line (with its '\n'), unless the relay is silent: node:http sends it as a chunk at once. */
  send(line: string): void {
    if (!this.ended && !this.registry.silent) {
      this.response.write(line);
    }
  }

  /** As a network break: the client sees the connection reset, with no end of the chunked body. */
  destroy(): void {
    this.forget();
    this.response.socket?.destroy();
  }

  /** As a server shutting down: the chunked body ends properly. */
  end(): void {
    this.forget();
    this.response.end();
  }

  private forget(): void {
    if (!this.ended) {
      this.ended = true;
      clearInterval(this.keepalive);
      this.registry.remove(this);
    }
  }
}

export type Stream = Pick<OpenStream, 'send'>;

/** The open streams, each listed once, whatever number of topics it follows. */
export class StreamRegistry {
  /** While true, no stream gets any line (keepalives tick on and are dropped). */
  silent = false;
  private readonly streams = new Set<OpenStream>();

  constructor(
    private readonly keepaliveMs: number,
    /** Told when a stream ends, with its topics. */
    private readonly onEnded: (topics: ReadonlySet<string>) => void,
  ) {}

  /** Registers the stream; its response must have been sent its headers already. */
  open(topics: ReadonlySet<string>, response: ServerResponse, keepaliveLine: () => string): Stream {
    const stream = new OpenStream(topics, response, this, this.keepaliveMs, keepaliveLine);
    this.streams.add(stream);
    return stream;
  }

  remove(stream: OpenStream): void {
    if (this.streams.delete(stream)) {
      this.onEnded(stream.topics);
    }
  }

  count(topic: string): number {
    return this.following(topic).length;
  }

  /** Sends `line` to every stream that follows `topic`. */
  broadcast(topic: string, line: string): void {
    for (const stream of this.following(topic)) {
      stream.send(line);
    }
  }

  destroyAll(): void {
    for (const stream of [...this.streams]) {
      stream.destroy();
    }
  }

  endAll(): void {
    for (const stream of [...this.streams]) {
      stream.end();
    }
  }

  private following(topic: string): OpenStream[] {
    return [...this.streams].filter((stream) => stream.topics.has(topic));
  }
}
