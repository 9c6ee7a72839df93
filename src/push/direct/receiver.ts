import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorMessage, type Logger, quoteForLog } from '../../log.js';
import { isReceiverSecret } from '../../session/push-secrets.js';
import { type DropListener, MAX_BODY_BYTES, NotificationIntake } from '../intake.js';
import type { DoorbellNotification } from '../notification.js';
import { ConnectionSlots } from './connection-slots.js';

/**
 * The push receiver of direct mode: the HTTP server, its bounds against strangers, and how it reads a
 * request's body.
 */

/**
 * What one client can hold of the receiver, which faces the internet: every connection costs memory
 * and a file descriptor for as long as it lasts (docs/cloud-protocol.md).
 */
export interface ReceiverBounds {
  /** A request's headers are complete this long after it began (a new connection's first: after it opened). */
  headersTimeoutMs: number;
  /** The whole request, body included, is complete this long after it began. */
  requestTimeoutMs: number;
  /** How often both are checked: a request runs over its time by at most this much. */
  checkIntervalMs: number;
  /** How long a connection may sit idle between requests. */
  keepAliveMs: number;
  /** The request line and headers together. */
  maxHeaderBytes: number;
  /**
   * Connections open at once; a new one takes the place of the oldest without a complete request,
   * else of the one idle longest, never of one whose delivery is being read or answered.
   */
  maxConnections: number;
}

/**
 * A delivery is one small request sent at once: a second is plenty, so these leave a slow network
 * room while keeping what a stranger holds small (a few hundred connections, each only seconds).
 */
export const RECEIVER_BOUNDS: Readonly<ReceiverBounds> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  checkIntervalMs: 1_000,
  keepAliveMs: 5_000,
  maxHeaderBytes: 8 * 1024,
  maxConnections: 256,
};

/**
 * A keep-alive client is told this much less than its connection really lives, so one that sends its
 * next request at the last moment it was told does not meet the connection closing.
 */
const KEEP_ALIVE_GRACE_MS = 1_000;

/** Node's HTTP server enforces all but the connection limit itself. */
export function serverOptions(bounds: ReceiverBounds): ServerOptions {
  const grace = Math.min(KEEP_ALIVE_GRACE_MS, bounds.keepAliveMs / 2);
  return {
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: bounds.requestTimeoutMs,
    // Node's default checks every 30 s, which would let a connection outlive its timeout by that much.
    connectionsCheckingInterval: bounds.checkIntervalMs,
    keepAliveTimeout: bounds.keepAliveMs - grace,
    keepAliveTimeoutBuffer: grace,
    maxHeaderSize: bounds.maxHeaderBytes,
  };
}

/** Reading a request body within a byte limit, for the push receiver. */

export type BodyResult = { kind: 'complete'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

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
