/**
 * What the process holds, counted the same way after the launch and after the week: timers pending
 * on the simulated clock and open sockets and servers (the plugin's, and the fixed set of the
 * simulated services, the relay and the home's link to it), and the heap's objects after garbage
 * collection.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import type { SimulatedTime } from './simulated-time.js';

const NETWORK_HANDLES = new Set(['TCPSocketWrap', 'TCPServerWrap']);

export interface Held {
  handles: number;
  heapBytes: number;
}

/**
 * The heap spaces that hold no object of the program's: V8's compiled code and what describes it
 * (bytecode, deoptimization data), and its read-only builtins. Compiled code moves by megabytes over
 * a week, as V8 optimizes the busiest functions and drops the bytecode of idle ones; the other spaces
 * hold every JavaScript object, the plugin's data among them.
 */
const CODE_SPACES = /code|trusted|read_only/;

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
  const objects = getHeapSpaceStatistics().filter(({ space_name }) => !CODE_SPACES.test(space_name));
  return { handles: time.pendingTimers() + sockets, heapBytes: objects.reduce((sum, space) => sum + space.space_used_size, 0) };
}
