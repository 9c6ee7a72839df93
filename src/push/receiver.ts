import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, STATUS_CODES } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorMessage, quoteForLog, type Logger } from '../log.js';
import { isReceiverSecret } from '../session/push-secrets.js';
import { ConnectionSlots } from './connection-slots.js';
import { RECEIVER_BOUNDS, serverOptions, type ReceiverBounds } from './receiver-bounds.js';
import { MAX_BODY_BYTES, NotificationIntake, type DropListener } from './intake.js';
import type { DoorbellNotification } from './notification.js';
import { isJsonContentType, readBody } from './request-body.js';

export interface PushReceiverOptions {
  host: string;
  port: number;
  /** The capability part of `/push/<secret>`: knowing it is what authorises a delivery. */
  secret: string;
  log: Logger;
  /** Called once per fresh (non-duplicate) valid notification, of any kind. */
  onNotification: (notification: DoorbellNotification) => void;
  /** Injectable clock for the duplicate window. */
  now?: () => number;
  /** Tighter bounds, for tests that cannot wait for the real ones. */
  bounds?: Partial<ReceiverBounds>;
  /** Told of each body refused as not a notification (a 400) or dropped as a duplicate. */
  onDropped?: DropListener;
}

const PUSH_PATH_PREFIX = '/push/';

/** How one request ends: the status, why (for the debug log) and any extra headers. */
interface Answer {
  status: number;
  reason: string;
  headers?: Record<string, string>;
}

/**
 * The HTTP endpoint that push deliveries reach in direct mode (docs/cloud-protocol.md). It answers every request with a small
 * status-only response and hands each fresh valid notification to `onNotification`.
 */
export class PushReceiver {
  private readonly intake: NotificationIntake;
  /** Digest of `/push/<secret>`: comparing equal-length digests leaks neither the secret nor its length. */
  private readonly pushPathDigest: Buffer;
  private readonly bounds: ReceiverBounds;
  private readonly slots: ConnectionSlots;
  private server: Server | undefined;
  private listening: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: PushReceiverOptions) {
    // The secret is the only authorisation: it must be one push.json holds, which cannot be guessed.
    if (!isReceiverSecret(options.secret)) {
      throw new Error('Push receiver secret must be 43 base64url characters (32 random bytes)');
    }
    this.intake = new NotificationIntake(options.onNotification, options.log, options.now, options.onDropped);
    this.pushPathDigest = sha256(PUSH_PATH_PREFIX + options.secret);
    this.bounds = { ...RECEIVER_BOUNDS, ...options.bounds };
    this.slots = new ConnectionSlots(this.bounds.maxConnections);
  }

  /** Connections open now, and how many of them hold a delivery being read or answered, which no newcomer closes. */
  get connections(): { open: number; delivering: number } {
    return { open: this.slots.size, delivering: this.slots.kept };
  }

  /** Resolves with the address actually bound (port 0 picks a free port). A receiver starts once. */
  async start(): Promise<{ host: string; port: number }> {
    if (this.server !== undefined) {
      throw new Error('Push receiver can only be started once');
    }
    const server = createServer(serverOptions(this.bounds), (req, res) => void this.handle(req, res));
    server.on('connection', (socket: Socket) => this.slots.admit(socket));
    // An Expect header other than 100-continue would get Node's own 417, which keeps the connection
    // open; the sender's expectation is ignored instead and the request checked like any other.
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res));
    this.server = server;
    this.listening = this.listen(server);
    await this.listening;
    // Without a listener, a later server error (such as running out of file descriptors) would crash Homebridge.
    server.on('error', (error) => this.options.log.warn(`Push receiver error: ${error.message}`));
    const { port } = server.address() as AddressInfo;
    return { host: this.options.host, port };
  }

  /** Stops listening and drops every open connection, idle keep-alive ones included, so the port is free at once. */
  close(): Promise<void> {
    const { server, listening } = this;
    if (server === undefined || listening === undefined) {
      return Promise.resolve();
    }
    // Closing before listen() completed would let the socket open afterwards and hold the port.
    this.closing ??= listening.then(
      () => closeServer(server),
      () => undefined,
    );
    return this.closing;
  }

  private listen(server: Server): Promise<void> {
    const { host, port } = this.options;
    return new Promise((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        const inUse = error.code === 'EADDRINUSE';
        if (inUse) {
          this.options.log.warn(`Push receiver port ${port} on ${host} is already in use: set push.port to a free one`);
        }
        const problem = inUse ? 'the port is already in use' : (error.code ?? error.message);
        reject(new Error(`Push receiver cannot listen on ${host}:${port}: ${problem}`, { cause: error }));
      };
      server.once('error', onError);
      server.listen({ host, port }, () => {
        server.off('error', onError);
        resolve();
      });
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const { socket } = req;
    // Node tells of a request once its line and headers are parsed, before its body: from now until
    // its answer is written, one that names the secret path keeps its connection against newcomers.
    const isDelivery = this.isPushPath(req.url ?? '');
    this.slots.requestStarted(socket, isDelivery);
    res.once('close', () => this.slots.requestEnded(socket, isDelivery));
    let answer: Answer | undefined;
    try {
      answer = await this.judge(req, isDelivery);
    } catch (error) {
      // A bug of ours, not a bad request: worth a warning, and the server must keep serving.
      this.options.log.warn(`Push receiver failed on a request: ${errorMessage(error)}`);
      answer = { status: 500, reason: 'internal error' };
    }
    if (answer === undefined) {
      this.logRequest(req, 'client aborted', startedAt);
      return;
    }
    respond(res, answer);
    this.logRequest(req, `${answer.status} ${answer.reason}`, startedAt);
  }

  /** The checks in their documented order, the first failure answering. Undefined when the client went away. */
  private async judge(req: IncomingMessage, isDelivery: boolean): Promise<Answer | undefined> {
    if (!isDelivery) {
      return { status: 404, reason: 'unknown path or wrong secret' };
    }
    if (req.method !== 'POST') {
      return { status: 405, reason: 'only POST is allowed', headers: { Allow: 'POST' } };
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      return { status: 415, reason: 'content type is not application/json' };
    }
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body.kind === 'aborted') {
      return undefined;
    }
    if (body.kind === 'too-large') {
      return { status: 413, reason: `body is larger than ${MAX_BODY_BYTES} bytes` };
    }
    return this.accept(body.body);
  }

  private accept(body: Buffer): Answer {
    const decision = this.intake.accept(body);
    return { status: decision.accepted ? 202 : decision.tooLarge ? 413 : 400, reason: decision.reason };
  }

  private isPushPath(url: string): boolean {
    return timingSafeEqual(sha256(pathOf(url)), this.pushPathDigest);
  }

  /** Debug only, so that a scanner cannot flood the log; the secret and the body never appear. */
  private logRequest(req: IncomingMessage, outcome: string, startedAt: number): void {
    const path = this.redactPath(pathOf(req.url ?? ''));
    this.options.log.debug(`Push ${req.method ?? '?'} ${path} -> ${outcome} (${Date.now() - startedAt} ms)`);
  }

  private redactPath(path: string): string {
    if (path.startsWith(PUSH_PATH_PREFIX)) {
      return quoteForLog(`${PUSH_PATH_PREFIX}***`);
    }
    // Any other path is kept for debugging (a publicUrl with a wrong prefix), the secret masked wherever it sits.
    return quoteForLog(path.split(this.options.secret).join('***'));
  }
}

/**
 * Only an accepted delivery keeps its connection for the next one. Every other answer closes it: the
 * client starts over, and a body we never read is not drained for it (Node would otherwise read all
 * of it to reuse the connection).
 */
function respond(res: ServerResponse, { status, headers }: Answer): void {
  const body = `${STATUS_CODES[status] ?? 'Error'}\n`;
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...(status === 202 ? {} : { Connection: 'close' }),
  });
  res.end(body);
}

/** The path without its query string, which the capability URL does not use. */
function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}

/** Resolves once the listening socket is closed; open connections are destroyed rather than awaited. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
