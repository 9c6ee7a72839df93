/**
 * What keeps this process alive, for a test that stops something and must know it let go: sockets,
 * servers, file operations (as Node counts them) and the timers still to fire.
 */
import { createHook } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** Every timer of this process not fired or cleared yet. */
const timers = new Map<number, NodeJS.Timeout>();

createHook({
  init(asyncId, type, _triggerAsyncId, resource) {
    if (type === 'Timeout') {
      timers.set(asyncId, resource as NodeJS.Timeout);
    }
  },
  destroy(asyncId) {
    timers.delete(asyncId);
  },
}).enable();

/** Node marks a timer that fired or was cleared; the destroy hook that forgets it comes a moment later. */
const isPending = (timer: NodeJS.Timeout) => !(timer as NodeJS.Timeout & { _destroyed?: boolean })._destroyed && timer.hasRef();

/** What this process holds now, by kind: Node's own count, with the timers counted as above. */
export function heldResources(): string[] {
  const timersHeld = [...timers.values()].filter(isPending).map(() => 'Timeout');
  return [...process.getActiveResourcesInfo().filter((kind) => kind !== 'Timeout'), ...timersHeld];
}

/** What is held now beyond `baseline` (an earlier heldResources()). */
export function heldBeyond(baseline: readonly string[]): string[] {
  const left = [...baseline];
  return heldResources().filter((kind) => {
    const index = left.indexOf(kind);
    if (index === -1) {
      return true;
    }
    left.splice(index, 1);
    return false;
  });
}

/** How often, and how many times in a row, nothing may be held beyond the baseline for a stop to count as done. */
const PROBE_MS = 2;
const PROBES_IN_A_ROW = 3;

/**
 * Resolves once nothing beyond `baseline` is held, seen a few times in a row: between two steps of
 * its work (a promise about to start the next file operation) a stopping component holds nothing
 * for a moment. Rejects with what is still held after `timeoutMs`: a leak.
 */
export async function untilReleased(baseline: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (let quiet = 0; quiet < PROBES_IN_A_ROW; ) {
    await sleep(PROBE_MS);
    const left = heldBeyond(baseline);
    quiet = left.length === 0 ? quiet + 1 : 0;
    if (left.length > 0 && performance.now() > deadline) {
      throw new Error(`still held ${timeoutMs} ms after the shutdown: ${left.join(', ')}`);
    }
  }
}
