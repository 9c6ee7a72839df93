/**
 * The built plugin's push receiver alone in a process, so that a test measures what connections cost
 * the process the receiver runs in, not the test's own: its resident memory at its peak, and the
 * sockets it holds at most. Started with IPC; the secret comes in RECEIVER_SECRET.
 *
 * Messages from the parent: `measure` (report, then measure peaks from here on), `report` (the peaks
 * since the last measure), `stop` (close the receiver and leave). Sent to the parent: `{ port }` once
 * listening, and each report.
 *
 * Plain JavaScript: it runs the built plugin under plain Node, where no TypeScript tooling is.
 */
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { PushReceiver } from '../../../dist/push/direct/receiver.js';

/** Often enough to catch a peak of a flood that lasts seconds. */
const SAMPLE_EVERY_MS = 10;

const quiet = () => undefined;
let delivered = 0;
const receiver = new PushReceiver({
  host: '127.0.0.1',
  port: 0,
  secret: process.env.RECEIVER_SECRET ?? '',
  log: { debug: quiet, info: quiet, warn: (message) => process.stderr.write(`${message}\n`), error: quiet },
  onNotification: () => (delivered += 1),
});

const openSockets = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;

let peakRss = 0;
let peakSockets = 0;
let rss = 0;
const sample = () => {
  peakSockets = Math.max(peakSockets, openSockets());
  try {
    rss = process.memoryUsage.rss();
    peakRss = Math.max(peakRss, rss);
  } catch {
    // Node reads the figure from a file: with every descriptor taken (EMFILE) it cannot, until one is free.
  }
};
const sampler = setInterval(sample, SAMPLE_EVERY_MS);

function report() {
  sample();
  process.send({ rss, peakRss, peakSockets, delivered });
}

process.on('message', async (message) => {
  if (message === 'measure') {
    report();
    peakRss = 0;
    peakSockets = 0;
  } else if (message === 'report') {
    report();
  } else if (message === 'stop') {
    clearInterval(sampler);
    await receiver.close();
    process.disconnect();
  }
});

const { port } = await receiver.start();
process.send({ port });
