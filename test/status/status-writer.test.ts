/**
 * The status writer's timing, against a real status.json under a locked data folder: a change is
 * written soon but never at once, writes start at least the minimum apart however often things
 * change, the latest change is always written, an unchanged status is rewritten on the heartbeat, a
 * change not yet written is written at stop, and nothing runs after stop.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDataFolder } from '../../src/storage/data-folder.js';
import type { JsonFile } from '../../src/storage/json-file.js';
import { openStatusFile, type DeliveryStatus } from '../../src/status/delivery-status.js';
import { StatusWriter, type StatusSink } from '../../src/status/plugin-status.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { ReadingClock } from '../support/reading-clock.js';

const TIMING = { minIntervalMs: 150, maxIntervalMs: 600 };

/** A status whose `pid` field carries a counter, so a test can tell which change a write holds. */
function statusNumber(version: number): DeliveryStatus {
  const now = new Date().toISOString();
  return { pid: version, startedAt: now, updatedAt: now, pushMode: 'direct', receiver: { listening: true }, registeredAt: null, nextRefreshAt: null, session: 'token', doorbells: [] };
}

/** The real file, with the start time of every write recorded: the writer reads its clock for it right before it calls the sink. */
class RecordingSink implements StatusSink {
  readonly writeStarts: number[] = [];
  failWith: Error | undefined;

  constructor(
    readonly file: JsonFile<DeliveryStatus>,
    private readonly clock: ReadingClock,
  ) {}

  get path(): string {
    return this.file.path;
  }

  async replace(status: DeliveryStatus): Promise<unknown> {
    this.writeStarts.push(this.clock.lastReading);
    if (this.failWith !== undefined) {
      throw this.failWith;
    }
    return this.file.replace(status);
  }
}

describe('StatusWriter', () => {
  let folderPath: string;
  let log: TestLogger;
  let sink: RecordingSink;
  let version: number;
  let writer: StatusWriter;
  let clock: ReadingClock;

  beforeEach(async () => {
    folderPath = await mkdtemp(join(tmpdir(), 'status-writer-'));
    log = createTestLogger();
    clock = new ReadingClock();
    sink = new RecordingSink(openStatusFile(openDataFolder(folderPath, log), log), clock);
    version = 1;
    writer = new StatusWriter(sink, () => statusNumber(version), log, TIMING, clock.now);
  });

  afterEach(async () => {
    await writer.stop();
    await rm(folderPath, { recursive: true, force: true });
  });

  const written = () => sink.file.read();

  it('never writes on the caller\'s way: a change only plans the write', async () => {
    writer.changed();

    expect(sink.writeStarts).toEqual([]);
    await pollUntil(written, (status) => status?.pid === 1, 2_000, 'the first write');
  });

  it('writes at most once per minimum interval while changes pour in, and always the latest change', async () => {
    const until = performance.now() + 1_000;
    while (performance.now() < until) {
      version += 1;
      writer.changed();
      await sleep(5);
    }
    await pollUntil(written, (status) => status?.pid === version, 2_000, 'the latest change');

    const gaps = sink.writeStarts.slice(1).map((start, index) => start - sink.writeStarts[index]);
    expect(gaps.filter((gap) => gap < TIMING.minIntervalMs)).toEqual([]);
    // About 150 changes in a second, at most one write per 150 ms of them.
    expect(sink.writeStarts.length).toBeGreaterThanOrEqual(2);
    expect(sink.writeStarts.length).toBeLessThanOrEqual(Math.ceil(1_000 / TIMING.minIntervalMs) + 2);
  });

  it('rewrites an unchanged status on the heartbeat, so its updatedAt shows it is alive', async () => {
    writer.changed();
    await pollUntil(() => sink.writeStarts.length, (count) => count >= 3, 5_000, 'two heartbeats');

    const gaps = sink.writeStarts.slice(1).map((start, index) => start - sink.writeStarts[index]);
    expect(gaps.every((gap) => gap >= TIMING.maxIntervalMs)).toBe(true);
  });

  it('leaves nothing running after stop: no write follows, however late a change comes', async () => {
    writer.changed();
    await pollUntil(() => sink.writeStarts.length, (count) => count >= 1, 2_000, 'the first write');
    await writer.stop();
    writer.changed();
    await sleep(TIMING.maxIntervalMs + 200);

    expect(sink.writeStarts).toHaveLength(1);
  });

  it('writes at stop a change it had only planned, so the file a restart reads is the last status', async () => {
    writer.changed();
    await pollUntil(written, (status) => status?.pid === 1, 2_000, 'the first write');
    version = 2;
    writer.changed();
    await writer.stop();

    expect(sink.writeStarts).toHaveLength(2);
    expect((await written())?.pid).toBe(2);
  });

  it('replaces status.json without reading it: a broken file draws no warning and is simply written over', async () => {
    await mkdir(dirname(sink.path), { recursive: true, mode: 0o700 });
    await writeFile(sink.path, '{"pid": half a file', { mode: 0o600 });
    const direct = new StatusWriter(sink.file, () => statusNumber(7), log, TIMING);
    try {
      direct.changed();
      // Read past the file's own reader, which would warn about the broken file itself.
      const onDisk = () => readFile(sink.path, 'utf8');
      await pollUntil(onDisk, (text) => text.includes('"pid": 7'), 2_000, 'the write');
    } finally {
      await direct.stop();
    }

    expect(log.lines.filter(({ level }) => level === 'warn')).toEqual([]);
  });

  it('warns once when the file cannot be written, and again only after it could be', async () => {
    sink.failWith = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    writer.changed();
    await pollUntil(() => sink.writeStarts.length, (count) => count >= 3, 5_000, 'three failed writes');

    expect(log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message)).toEqual([
      `Could not write ${sink.path} for the settings page: EACCES: permission denied`,
    ]);
  });

  it('says a status that cannot be made as a write that failed, and goes on writing once it can', async () => {
    let broken = true;
    const failing = new StatusWriter(sink, () => (broken ? (() => { throw new TypeError('a doorbell without its account'); })() : statusNumber(9)), log, TIMING, clock.now);
    failing.changed();
    await pollUntil(() => log.lines.filter(({ level }) => level === 'warn').length, (count) => count >= 1, 5_000, 'the warning');
    broken = false;
    failing.changed();
    await pollUntil(async () => /"pid": ?9\b/.test(await readFile(sink.path, 'utf8').catch(() => '')), Boolean, 5_000, 'a write after the snapshot could be made');
    await failing.stop();

    expect(log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message)).toEqual([
      `Could not write ${sink.path} for the settings page: a doorbell without its account`,
    ]);
  });
});
