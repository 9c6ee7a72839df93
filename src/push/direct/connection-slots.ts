import type { Socket } from 'node:net';

/** What the slots know of one open connection. */
interface Slot {
  /** Its requests whose line and headers are complete and whose answer is not written yet. */
  requests: number;
  /** How many of those are kept: they named what the connection is kept for (a delivery). */
  kept: number;
}

/**
 * A fixed number of connections for the push receiver, which faces the internet. A stranger can open
 * connections faster than any timeout ends them, so each one held costs memory and a file descriptor
 * until the process runs out of either. Refusing new connections at the bound would be no better: a
 * stranger holding every slot would then lock the doorbell service out. So a new connection is let in
 * by closing another, in this order:
 *
 * 1. the oldest one that has not sent a complete request line and headers yet (or whose request is
 *    not a kept one, and is closed after its answer anyway): what a stranger holds;
 * 2. only when there is none, the one idle the longest between requests (keep-alive);
 * 3. never one with a kept request (headers that name the delivery path) whose body is still being
 *    read or whose answer is still being written. A sender with a slow body, or one sending request
 *    after request on one connection, keeps it while anything else can go first.
 *
 * When every slot holds a kept request, the newcomer is closed instead: those are all sent by
 * whoever knows the delivery path, and cutting one short would lose a delivery to let in a
 * connection that may well be a stranger's.
 */
export class ConnectionSlots {
  private readonly open = new Map<Socket, Slot>();
  /** Connections without a complete request yet, or with only a stranger's: the oldest first (a Set iterates in insertion order). */
  private readonly incomplete = new Set<Socket>();
  /** Connections idle between requests: the one idle longest first. */
  private readonly idle = new Set<Socket>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`A connection limit must be a positive integer, not ${limit}`);
    }
  }

  /** How many connections are open now. */
  get size(): number {
    return this.open.size;
  }

  /** How many open connections hold a kept request, which no newcomer closes. */
  get kept(): number {
    let count = 0;
    for (const slot of this.open.values()) {
      count += slot.kept > 0 ? 1 : 0;
    }
    return count;
  }

  /** For each new connection, as it is accepted: makes room for it, or closes it when none can be made. */
  admit(socket: Socket): void {
    if (this.open.size >= this.limit) {
      const victim = first(this.incomplete) ?? first(this.idle);
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      // Forgotten at once: its 'close' comes later, and until then the newcomer would find no room.
      this.forget(victim);
      victim.destroy();
    }
    this.open.set(socket, { requests: 0, kept: 0 });
    this.incomplete.add(socket);
    socket.once('close', () => this.forget(socket));
  }

  /**
   * A request's line and headers are complete (its body may still be on its way). A kept one holds
   * its connection until `requestEnded`.
   */
  requestStarted(socket: Socket, kept: boolean): void {
    const slot = this.open.get(socket);
    if (slot === undefined) {
      return;
    }
    slot.requests += 1;
    slot.kept += kept ? 1 : 0;
    this.place(socket, slot);
  }

  /** The request's answer is written, or it never will be: with no request left, the connection is idle. */
  requestEnded(socket: Socket, kept: boolean): void {
    const slot = this.open.get(socket);
    if (slot === undefined) {
      return;
    }
    slot.requests = Math.max(0, slot.requests - 1);
    slot.kept = Math.max(0, slot.kept - (kept ? 1 : 0));
    if (slot.requests === 0) {
      // Last in the line of idle ones: a sender that has just been answered is the last to make room.
      this.incomplete.delete(socket);
      this.idle.delete(socket);
      this.idle.add(socket);
    } else {
      this.place(socket, slot);
    }
  }

  /** Where a connection with requests under way stands: kept out of reach, or among the strangers. */
  private place(socket: Socket, slot: Slot): void {
    this.idle.delete(socket);
    if (slot.kept > 0) {
      this.incomplete.delete(socket);
    } else {
      this.incomplete.add(socket);
    }
  }

  private forget(socket: Socket): void {
    this.open.delete(socket);
    this.incomplete.delete(socket);
    this.idle.delete(socket);
  }
}

function first(sockets: Set<Socket>): Socket | undefined {
  for (const socket of sockets) {
    return socket;
  }
  return undefined;
}
