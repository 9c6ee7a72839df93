/**
 * What the process holds, counted the same way after the launch and after the week: timers pending
 * on the simulated clock and open sockets and servers (the plugin's, and the fixed set of the
 * simulated services, the relay and the home's link to it), and the heap after garbage collection.
 */
import type { SimulatedTime } from './simulated-time.js';

const NETWORK_HANDLES = new Set(['TCPSocketWrap', 'TCPServerWrap']);

export interface Held {
  handles: number;
  heapBytes: number;
}

/** Collections in a row before the heap is read: one leaves what weak references and finalizers free next time. */
const COLLECTIONS = 3;

export async function held(time: SimulatedTime): Promise<Held> {
  const gc = globalThis.gc;
  if (gc === undefined) {
    throw new Error('the soak needs --expose-gc to measure the heap');
  }
  for (let collection = 0; collection < COLLECTIONS; collection += 1) {
    gc();
    await time.settle();
  }
  const sockets = process.getActiveResourcesInfo().filter((kind) => NETWORK_HANDLES.has(kind)).length;
  return { handles: time.pendingTimers() + sockets, heapBytes: process.memoryUsage().heapUsed };
}
