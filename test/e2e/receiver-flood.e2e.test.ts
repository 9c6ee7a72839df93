/**
 * One client holding 2,000 connections to the push receiver, as a stranger who found its port might:
 * silent ones, ones kept alive after a delivery, ones trickling their headers a byte at a time. The
 * receiver runs from the build in a process of its own, so the memory measured is the receiver's,
 * under a file limit of 1,024 (a common default): more connections than that, all held, would leave
 * it no descriptor to accept a delivery with. A real delivery still gets its 202 within 2 s, the
 * process's memory grows by at most 20 MiB at its peak, and it never holds more than 256 connections.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { RECEIVER_BOUNDS } from '../../src/push/direct/receiver.js';
import { rawPost, RawConnections } from '../support/raw-connections.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';

const CHILD = fileURLToPath(new URL('./support/receiver-process.mjs', import.meta.url));
const SECRET = randomBytes(32).toString('base64url');
const PUSH_PATH = `/push/${SECRET}`;
/** One id for every delivery of the flood: each is a duplicate, answered 202 and dropped. */
const FLOOD_MOTION = '{"device_id": 1234567, "kind": "motion", "id": "flood"}';

const CONNECTIONS = 2_000;
/** Opened this many at a time, as fast as loopback takes them. */
const BATCH = 100;
const TRICKLE_EVERY_MS = 300;
const FILE_LIMIT = 1_024;
const DELIVERY_BUDGET_MS = 2_000;
const MEMORY_BUDGET_BYTES = 20 * 1024 * 1024;
/** The receiver's own bound on connections open at once. */
const MAX_CONNECTIONS = RECEIVER_BOUNDS.maxConnections;
const CHILD_TIMEOUT_MS = 10_000;

interface Report {
  rss: number;
  peakRss: number;
  peakSockets: number;
  delivered: number;
}

let child: ChildProcess | undefined;
let port = 0;
const connections = new RawConnections();

function nextMessage<T>(): Promise<T> {
  const timeout = AbortSignal.timeout(CHILD_TIMEOUT_MS);
  return once(child as ChildProcess, 'message', { signal: timeout }).then(([message]) => message as T);
}

async function ask(message: 'measure' | 'report'): Promise<Report> {
  const answer = nextMessage<Report>();
  child?.send(message);
  return answer;
}

/** POSTs one notification as the doorbell service would; resolves with the status and how long it took. */
function deliver(id: string): Promise<{ status: number; ms: number }> {
  const startedAt = performance.now();
  const body = `{"device_id": 1234567, "kind": "motion", "id": "${id}"}`;
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: PUSH_PATH, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - startedAt }));
    });
    req.setTimeout(DELIVERY_BUDGET_MS * 2, () => req.destroy(new Error('no answer')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The flood's connection `index`: silent, kept alive after a delivery, or trickling its headers. */
async function hold(index: number): Promise<void> {
  const connection = await connections.open(port);
  if (index % 3 === 1) {
    connection.write(rawPost(PUSH_PATH, FLOOD_MOTION));
  } else if (index % 3 === 2) {
    connection.write(`POST ${PUSH_PATH} HTTP/1.1\r\nHost: x\r\n`);
    connection.trickle('X-Slow: '.padEnd(1_000, 'a'), TRICKLE_EVERY_MS);
  }
}

describeWithBuiltPlugin('2,000 connections held by one client', () => {
  beforeAll(async () => {
    // The shell lowers the file limit (soft and hard, so Node cannot raise it again), then becomes Node.
    const script = `ulimit -n ${FILE_LIMIT} && exec "$0" "$1"`;
    child = spawn('/bin/sh', ['-c', script, process.execPath, CHILD], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, RECEIVER_SECRET: SECRET },
    });
    ({ port } = await nextMessage<{ port: number }>());
  });

  afterAll(async () => {
    connections.destroyAll();
    if (child?.connected === true) {
      const exited = once(child, 'exit', { signal: AbortSignal.timeout(CHILD_TIMEOUT_MS) }).catch(() => undefined);
      child.send('stop');
      await exited;
    }
    if (child?.exitCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGKILL');
    }
  });

  it(
    `still answers a delivery with 202 within 2 s, grows by at most 20 MiB and holds at most ${MAX_CONNECTIONS} connections`,
    async () => {
      expect((await deliver('warm-up')).status).toBe(202);
      await sleep(200);
      const before = await ask('measure');

      for (let first = 0; first < CONNECTIONS; first += BATCH) {
        await Promise.all(Array.from({ length: BATCH }, (_, offset) => hold(first + offset)));
      }
      const delivery = await deliver('real').catch((error: unknown) => ({ status: String(error), ms: Number.NaN }));
      // The tricklers go on trickling for a while: the receiver's peak is taken under their load too.
      await sleep(3 * TRICKLE_EVERY_MS);
      const after = await ask('report');

      const growth = after.peakRss - before.rss;
      process.stderr.write(
        `receiver flood: 202 in ${Math.round(delivery.ms)} ms; RSS ${mib(before.rss)} -> peak ${mib(after.peakRss)} MiB ` +
          `(+${mib(growth)}); at most ${after.peakSockets} sockets\n`,
      );
      expect(delivery.status).toBe(202);
      expect(delivery.ms).toBeLessThanOrEqual(DELIVERY_BUDGET_MS);
      expect(after.delivered).toBe(3);
      expect(growth).toBeLessThanOrEqual(MEMORY_BUDGET_BYTES);
      expect(after.peakSockets).toBeLessThanOrEqual(MAX_CONNECTIONS);
    },
    60_000,
  );
});

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
