/**
 * Preloaded (`node --import`) into a benchmarked Homebridge that runs with --expose-gc. On SIGUSR2 it
 * waits for the heap to settle, then writes the process's memory to stderr as one line, which the
 * benchmark reads from Homebridge's output. A signal rather than a timer, so the benchmark picks the
 * moment (once start-up is over), the same way in a Homebridge with the plugin and in one without.
 *
 * Settled: every SETTLE_STEP_MS two full collections, then heap used + external is read; once the last
 * SETTLE_READINGS readings lie within SETTLE_SPREAD_BYTES of one another, the heap has stopped changing.
 * A heap still moving after MEMORY_PROBE_SETTLE_MAX_MS (from the environment) is read as it is, and
 * the line says it did not settle.
 *
 * Then the RSS twice: as V8 holds it, and after a memory-reducing collection (what V8 does when the
 * process is idle or short of memory), which gives back the young generation V8 grew during start-up
 * and the pages it pooled. The first depends on V8's sizing of that young generation (16 or 32 MiB,
 * whichever start-up happened to trigger), the second on what the process really keeps.
 *
 * Plain JavaScript: it runs inside the Node that runs Homebridge, where no TypeScript tooling is.
 */
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const SETTLE_STEP_MS = 500;
const SETTLE_READINGS = 3;
const SETTLE_SPREAD_BYTES = 64 * 1024;
const settleMaxMs = Number(process.env.MEMORY_PROBE_SETTLE_MAX_MS ?? 30_000);

function collect() {
  // Twice: objects freed by the first collection's finalisers go in the second.
  globalThis.gc?.();
  globalThis.gc?.();
}

function heapAndExternal() {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/** Resolves with the settled reading's heap figures and how long settling took. */
async function settle() {
  const startedAt = performance.now();
  const recent = [];
  for (;;) {
    collect();
    recent.push(heapAndExternal());
    recent.splice(0, recent.length - SETTLE_READINGS);
    const settled = recent.length === SETTLE_READINGS && Math.max(...recent) - Math.min(...recent) < SETTLE_SPREAD_BYTES;
    const settleMs = Math.round(performance.now() - startedAt);
    if (settled || settleMs + SETTLE_STEP_MS > settleMaxMs) {
      const { heapUsed, external } = process.memoryUsage();
      return { heapUsed, external, settled, settleMs };
    }
    // Unreferenced: a Homebridge told to stop while this waits stops, probe or not.
    await sleep(SETTLE_STEP_MS, undefined, { ref: false });
  }
}

let busy = false;

process.on('SIGUSR2', () => {
  if (busy) {
    return;
  }
  busy = true;
  void settle().then((heap) => {
    const rssHeld = process.memoryUsage().rss;
    globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const rss = process.memoryUsage().rss;
    const collected = typeof globalThis.gc === 'function';
    process.stderr.write(`[memory-probe] ${JSON.stringify({ ...heap, rssHeld, rss, collected })}\n`);
    busy = false;
  });
});
