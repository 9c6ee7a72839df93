/**
 * A burst: notifications as fast as the sender can deliver them to the plugin in this process, each
 * a ring with an id of its own, round the configured doorbells. A ring fires the doorbell service's
 * event every time, so every notification that reaches its accessory is counted there; one the
 * receiver accepted (202) but that never arrived is lost.
 */
import { pollUntil } from '../lib/poll.js';
import type { RunningPlatform } from '../lib/platform-harness.js';
import { characteristicOf } from './in-process.js';
import { MIB, round2, type NotificationSender } from './latency.js';

export interface BurstFigure {
  sent: number;
  accepted: number;
  lost: number;
  perSecond: number;
  /** The heap after the burst less the heap before, each after garbage collection: what the burst left behind. */
  heapGrowthMb: number;
}


/** Each accepted ring reaches its accessory before the receiver answers; this covers one that would straggle. */
const STRAGGLER_WAIT_MS = 2_000;

export async function runBurst(
  sender: NotificationSender,
  { test, log }: RunningPlatform,
  doorbells: readonly string[],
  size: number,
  concurrency: number,
): Promise<BurstFigure> {
  let reached = 0;
  const count = (): void => {
    reached += 1;
  };
  const rings = doorbells.map((deviceId) => characteristicOf(test, deviceId, 'ring'));
  rings.forEach((ring) => ring.on('change', count));
  // The harness keeps every log line for tests to read, where Homebridge prints and forgets them:
  // they are not the plugin's memory.
  const settledHeap = (): number => {
    log.lines.length = 0;
    collectGarbage();
    return process.memoryUsage().heapUsed;
  };
  try {
    const heapBefore = settledHeap();
    let next = 0;
    let accepted = 0;
    const deliverUntilDone = async (): Promise<void> => {
      while (next < size) {
        const deviceId = doorbells[next % doorbells.length];
        next += 1;
        // Awaited first: `accepted += await …` would read the count before the wait and lose other deliveries' increments.
        const status = await sender.send(deviceId, 'ring');
        if (status === 202) {
          accepted += 1;
        }
      }
    };
    const startedAt = performance.now();
    await Promise.all(Array.from({ length: concurrency }, deliverUntilDone));
    const seconds = (performance.now() - startedAt) / 1000;
    await pollUntil(() => reached, (arrived) => arrived >= accepted, STRAGGLER_WAIT_MS, 'every accepted ring to arrive', 20).catch(() => undefined);
    const heapAfter = settledHeap();
    return { sent: size, accepted, lost: accepted - reached, perSecond: Math.round(size / seconds), heapGrowthMb: round2((heapAfter - heapBefore) / MIB) };
  } finally {
    rings.forEach((ring) => ring.off('change', count));
  }
}

/** Twice: what the first collection's finalisers free goes in the second. bench.ts makes gc() available. */
function collectGarbage(): void {
  if (globalThis.gc === undefined) {
    throw new Error('the benchmark needs gc(): run it with node --expose-gc (npm run bench does)');
  }
  globalThis.gc();
  globalThis.gc();
}
