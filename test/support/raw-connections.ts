/**
 * Raw TCP clients of an HTTP server on loopback, for what an HTTP client library never does: hold a
 * connection without a word, or send a request one byte at a time. Each records what it received and
 * when the server closed it; `destroyAll` ends every one still open, with its timer.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

const HOST = '127.0.0.1';

export class RawConnection {
  readonly openedAt = performance.now();
  /** Everything the server sent, as text. */
  received = '';
  /** When the connection closed, by either side. */
  closedAt: number | undefined;
  readonly closed: Promise<void>;
  private trickling: NodeJS.Timeout | undefined;

  constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (this.received += chunk));
    // A reset by the server is one of the expected ways for these connections to end.
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.closedAt = performance.now();
        clearInterval(this.trickling);
        resolve();
      }),
    );
  }

  get isOpen(): boolean {
    return this.closedAt === undefined;
  }

  /** The status of every answer received so far. */
  get statuses(): number[] {
    return [...this.received.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((match) => Number(match[1]));
  }

  write(text: string): void {
    if (this.isOpen) {
      this.socket.write(text);
    }
  }

  /** Sends `text` one character every `everyMs`, until it is all sent or the connection closes. */
  trickle(text: string, everyMs: number): void {
    let next = 0;
    this.trickling = setInterval(() => {
      this.write(text.charAt(next));
      next += 1;
      if (next >= text.length) {
        clearInterval(this.trickling);
      }
    }, everyMs);
  }

  /** Resolves once `count` answers have arrived, or the connection closed first. */
  async answered(count = 1): Promise<void> {
    while (this.isOpen && this.statuses.length < count) {
      await Promise.race([once(this.socket, 'data').catch(() => undefined), this.closed]);
    }
  }

  /** Resolves once closed, or after `ms` with the connection still open: whether it closed. */
  async closesWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([this.closed, timeUp]);
    clearTimeout(timer);
    return !this.isOpen;
  }

  destroy(): void {
    clearInterval(this.trickling);
    this.socket.destroy();
  }
}

export class RawConnections {
  private readonly all = new Set<RawConnection>();

  /** Resolves once connected; a connection the server accepted and closed at once is returned closed. */
  async open(port: number): Promise<RawConnection> {
    const connection = new RawConnection(connect(port, HOST));
    this.all.add(connection);
    void connection.closed.then(() => this.all.delete(connection));
    await Promise.race([once(connection.socket, 'connect').catch(() => undefined), connection.closed]);
    return connection;
  }

  destroyAll(): void {
    for (const connection of this.all) {
      connection.destroy();
    }
  }
}

/** The head of a POST of `body` as a client writes it, `extraHeaders` being whole lines ending in CRLF. */
export function rawPostHead(path: string, body: string, extraHeaders = '', contentType = 'application/json'): string {
  const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return `${head}${extraHeaders}\r\n`;
}

/** A whole POST of `body`. */
export function rawPost(path: string, body: string, extraHeaders = ''): string {
  return rawPostHead(path, body, extraHeaders) + body;
}
