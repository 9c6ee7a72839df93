/**
 * Preloaded (`node --import`) into a benchmarked Homebridge that runs with --expose-gc. On SIGUSR2 it
 * collects garbage and writes the process's memory to stderr as one line, which the benchmark reads
 * from Homebridge's output. A signal rather than a timer, so the benchmark picks the moment: once
 * start-up has settled, the same moment in a Homebridge with the plugin and in one without.
 *
 * Plain JavaScript: it runs inside the Node that runs Homebridge, where no TypeScript tooling is.
 */
import process from 'node:process';
import v8 from 'node:v8';

process.on('SIGUSR2', () => {
  // Twice: objects freed by the first collection's finalisers go in the second.
  globalThis.gc?.();
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  // V8 enlarges its young generation when start-up allocates a lot, and keeps it: part of the RSS
  // that no object of the heap accounts for.
  const newSpace = v8.getHeapSpaceStatistics().find(({ space_name: name }) => name === 'new_space')?.space_size ?? 0;
  const collected = typeof globalThis.gc === 'function';
  process.stderr.write(`[memory-probe] ${JSON.stringify({ rss, heapUsed, newSpace, collected })}\n`);
});
