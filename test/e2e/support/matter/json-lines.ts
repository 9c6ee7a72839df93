/**
 * Requests, answers and events as JSON lines over one stream: how a test outside the private network
 * talks to the host process inside it (see private-network.ts). Either end may serve requests.
 */
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import type { Duplex } from 'node:stream';
import { withTimeout } from '../../../../scripts/lib/timeout.js';

type Message =
  | { id: number; method: string; params?: unknown }
  | { id: number; result?: unknown; error?: string }
  | { event: string; data?: unknown };

export type RequestHandler = (method: string, params: unknown) => Promise<unknown>;

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

export class JsonLinesPeer {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly events = new EventEmitter();
  private handler: RequestHandler | undefined;
  private closed = false;

  constructor(private readonly stream: Duplex) {
    createInterface({ input: stream }).on('line', (line) => this.receive(line));
    stream.on('error', () => undefined);
    stream.once('close', () => {
      this.closed = true;
      for (const { reject } of this.pending.values()) {
        reject(new Error('The other end closed the channel before answering'));
      }
      this.pending.clear();
    });
  }

  /** Asks the other end; rejects with its error, on timeout, or when the channel closes first. */
  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.closed) {
      return Promise.reject(new Error(`Cannot ask for ${method}: the channel is closed`));
    }
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.send({ id, method, params });
    return withTimeout(answer, timeoutMs, method).finally(() => this.pending.delete(id));
  }

  /** Answers the other end's requests with `handler`; a thrown error goes back as its message. */
  serve(handler: RequestHandler): void {
    this.handler = handler;
  }

  emitEvent(event: string, data?: unknown): void {
    this.send({ event, data });
  }

  onEvent(listener: (event: string, data: unknown) => void): void {
    this.events.on('event', listener);
  }

  private send(message: Message): void {
    if (!this.closed) {
      this.stream.write(`${JSON.stringify(message, jsonSafe)}\n`);
    }
  }

  private receive(line: string): void {
    const message = JSON.parse(line) as Message;
    if ('event' in message) {
      this.events.emit('event', message.event, message.data);
    } else if ('method' in message) {
      void this.answer(message.id, message.method, message.params);
    } else {
      const pending = this.pending.get(message.id);
      if (message.error === undefined) {
        pending?.resolve(message.result);
      } else {
        pending?.reject(new Error(message.error));
      }
    }
  }

  private async answer(id: number, method: string, params: unknown): Promise<void> {
    try {
      if (this.handler === undefined) {
        throw new Error(`Nothing here answers ${method}`);
      }
      this.send({ id, result: await this.handler(method, params) });
    } catch (error) {
      this.send({ id, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** Matter's 64-bit ids are bigints, which JSON cannot carry: they travel as decimal strings. */
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
