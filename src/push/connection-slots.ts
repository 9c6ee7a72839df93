import type { Socket } from 'node:net';

/**
 * A fixed number of connections for the push receiver, which faces the internet. A stranger can open
 * connections faster than any timeout ends them, so each one held costs memory and a file descriptor
 * until the process runs out of either. Refusing new connections at the bound would be no better: a
 * stranger holding every slot would then lock the doorbell service out. So a new connection is let in
 * by closing the oldest one that holds nothing worth keeping, one idle between requests or still
 * sending its request. A connection whose complete request is being answered is never closed; only
 * when every slot holds one is the newcomer turned away.
 */
export class ConnectionSlots {
  /** Every open connection, the oldest first (a Set iterates in insertion order). */
  private readonly open = new Set<Socket>();
  /** Connections whose complete request is being answered. */
  private readonly beingAnswered = new Set<Socket>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`A connection limit must be a positive integer, not ${limit}`);
    }
  }

  /** How many connections are open now. */
  get size(): number {
    return this.open.size;
  }

  /** For each new connection, as it is accepted: makes room for it, or closes it when none can be made. */
  admit(socket: Socket): void {
    if (this.open.size >= this.limit) {
      const oldest = this.oldestIdleOrIncomplete();
      if (oldest === undefined) {
        socket.destroy();
        return;
      }
      // Forgotten at once: its 'close' comes later, and until then the newcomer would find no room.
      this.forget(oldest);
      oldest.destroy();
    }
    this.open.add(socket);
    socket.once('close', () => this.forget(socket));
  }

  /** The connection's request is complete: it keeps its slot until `answered`. */
  answering(socket: Socket): void {
    if (this.open.has(socket)) {
      this.beingAnswered.add(socket);
    }
  }

  /** The answer is written (or the connection went away): the connection is idle, or closing. */
  answered(socket: Socket): void {
    this.beingAnswered.delete(socket);
  }

  private oldestIdleOrIncomplete(): Socket | undefined {
    for (const socket of this.open) {
      if (!this.beingAnswered.has(socket)) {
        return socket;
      }
    }
    return undefined;
  }

  private forget(socket: Socket): void {
    this.open.delete(socket);
    this.beingAnswered.delete(socket);
  }
}
