/**
 * The plugin's status.json at launch and under a burst, against real files on a fake clock. The last
 * run's file that cannot be read for a while is tried again and never written over meanwhile, and its
 * outages join what the Doorbell Alerts rule decided without them, the sensor unchanged; a file that
 * stays unreadable for a minute is given up with one warning, and the writes go on; dropped
 * notifications reach the file within a second, with nothing else changing.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { lstat, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AlertsRule, type AlertsClock } from '../../src/alerts/alerts-rule.js';
import type { AlertsRecord, Outage } from '../../src/status/delivery-status.js';
import { PushReceiver } from '../../src/push/direct/receiver.js';
import { DATA_FILES, dataFolderPath, openDataFolder } from '../../src/storage/data-folder.js';
import type { DeliveryStatus } from '../../src/status/delivery-status.js';
import { PluginStatus } from '../../src/status/plugin-status.js';
import type { StatusSink } from '../../src/status/plugin-status.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';

const DOORBELL = { deviceId: '1234567', name: 'Front Door' };
const START = Date.parse('2026-03-01T10:00:00.000Z');
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Every status handed to the file, and how many writes have ended. */
class RecordingSink {
  readonly started: DeliveryStatus[] = [];
  ended = 0;

  readonly wrap = (file: StatusSink): StatusSink => ({
    path: file.path,
    replace: async (status) => {
      this.started.push(status);
      try {
        return await file.replace(status);
      } finally {
        this.ended += 1;
      }
    },
  });
}

/**
 * Lets real I/O (the file system, sockets) finish while the fake clock stands still, firing only what
 * falls due now, until `done`; bounded in turns, never a race against the machine's speed. The clock
 * is only ever moved synchronously: I/O that ends during an asynchronous move would plan its timers
 * inside the move, where the fake clock makes a 0 ms timer wait 1 ms.
 */
async function settle(what: string, done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 2_000; turn += 1) {
    jest.advanceTimersByTime(0);
    if (done()) {
      return;
    }
    await sleep(5);
  }
  throw new Error(`${what} did not happen`);
}

interface Launch {
  status: PluginStatus;
  rule: AlertsRule;
  sink: RecordingSink;
  log: TestLogger;
  /** Each state the rule showed the sensor, true for open. */
  shown: boolean[];
  /** Milliseconds of fake time since launch. */
  elapsed(): number;
}

describe('PluginStatus', () => {
  let storagePath: string;
  let launched: Launch | undefined;
  const dataFolder = () => dataFolderPath(storagePath);
  const statusPath = () => join(dataFolder(), DATA_FILES.status);

  beforeEach(async () => {
    // Only the timers and the monotonic clock are fake: the file system, the sockets and the data
    // folder's lock run on their own.
    jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'nextTick', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
    storagePath = await mkdtemp(join(tmpdir(), 'plugin-status-'));
    launched = undefined;
  });

  afterEach(async () => {
    if (launched !== undefined) {
      launched.rule.dispose();
      const stopping = launched.status.stop();
      await settle('the stop', () => launched?.sink.ended === launched?.sink.started.length);
      await stopping;
    }
    jest.useRealTimers();
    await rm(storagePath, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  /** The plugin's status and alerts rule as the platform wires them, the doorbell down until confirmed. */
  function launch(): Launch {
    const log = createTestLogger();
    const sink = new RecordingSink();
    const shown: boolean[] = [];
    const launchedAt = performance.now();
    const elapsed = () => performance.now() - launchedAt;
    const clock: AlertsClock = {
      monotonic: () => performance.now(),
      wall: () => START + elapsed(),
      after: (ms, action) => {
        const timer = setTimeout(action, ms);
        return () => clearTimeout(timer);
      },
    };
    const rule = new AlertsRule({
      down: [DOORBELL.deviceId],
      describe: () => ({ words: 'Front Door down', todo: 'Do something.' }),
      log,
      onShow: (open) => shown.push(open),
      // As the platform does: what the rule records changed, so the status plans a write.
      onChange: () => launched?.status.changed(),
      clock,
    });
    const status = new PluginStatus({
      doorbells: [DOORBELL],
      pushMode: 'direct',
      usesToken: false,
      folder: openDataFolder(storagePath, log),
      log,
      alerts: { restoreRecord: (previous) => rule.restore(previous), record: () => rule.record() },
      sink: sink.wrap,
    });
    status.start();
    launched = { status, rule, sink, log, shown, elapsed };
    return launched;
  }

  const failedReads = ({ log }: Launch) => log.lines.filter(({ level, message }) => level === 'debug' && message.includes('trying again in 2 s')).length;
  const warnings = ({ log }: Launch) => log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message);
  const written = async () => JSON.parse(await readFile(statusPath(), 'utf8')) as DeliveryStatus;

  /** Moves the fake clock on to the next read of the last run's file, and waits for its outcome. */
  async function nextRead(run: Launch): Promise<void> {
    const before = failedReads(run);
    jest.advanceTimersByTime(2_000);
    await settle('a read of the last run\'s file', () => failedReads(run) > before || run.sink.started.length > 0 || warnings(run).length > 0);
  }

  describe('when the last run\'s file cannot be read at launch', () => {
    const from = iso(START - 10 * MINUTE);
    const older: Outage = { from: iso(START - 3 * 60 * MINUTE), to: iso(START - 2 * 60 * MINUTE), reason: 'the session expired' };
    /** Alerts had stopped when the last run shut down, and once before that night. */
    const history: AlertsRecord = { alerts: { flowing: false, since: from, reason: 'the relay has been unreachable since 09:50' }, outages: [{ from, to: null, reason: 'the relay has been unreachable since 09:50' }, older] };
    const lastRunFile: DeliveryStatus = {
      pid: 1,
      startedAt: iso(START - 5 * 60 * MINUTE),
      updatedAt: iso(START - MINUTE),
      pushMode: 'direct',
      receiver: { listening: true },
      registeredAt: null,
      nextRefreshAt: null,
      session: 'signed-in',
      doorbells: [],
      ...history,
    };
    /** Where status.json leads: a link to itself until the test puts the last run's file there. */
    const held = () => join(dataFolder(), 'held.json');

    /** status.json is a link to `held.json`, which loops (ELOOP): every read fails, as EIO or EMFILE would. */
    beforeEach(async () => {
      await mkdir(dataFolder(), { recursive: true, mode: 0o700 });
      await symlink('held.json', held());
      await symlink('held.json', statusPath());
    });

    /** The last run's file appears where status.json leads, replacing the loop atomically. */
    async function becomeReadable(): Promise<void> {
      const temporary = join(dataFolder(), 'held.json.tmp');
      await writeFile(temporary, JSON.stringify(lastRunFile), { mode: 0o600 });
      await rename(temporary, held());
    }

    it('tries it again, writes nothing meanwhile, and carries its outages over once read, the sensor as decided without them', async () => {
      const run = launch();
      await settle('the first read', () => failedReads(run) > 0 || run.sink.started.length > 0);
      expect(run.sink.started).toEqual([]);
      while (run.elapsed() < 20_000) {
        await nextRead(run);
        if (run.elapsed() === 10_000) {
          // The sensor decides without the history meanwhile: the doorbell confirmed, alerts flow.
          run.status.board.subscribed(DOORBELL.deviceId);
          run.rule.setDown(DOORBELL.deviceId, false);
        }
      }
      expect(run.sink.started).toEqual([]);
      expect((await lstat(statusPath())).isSymbolicLink()).toBe(true);
      expect(run.shown).toEqual([false]);

      await becomeReadable();
      await nextRead(run);
      await settle('the first write', () => run.sink.ended > 0);

      expect(run.elapsed()).toBe(22_000);
      expect(run.sink.started).toHaveLength(1);
      const status = await written();
      expect(status.pid).toBe(process.pid);
      // The outage under way at the last shutdown ended when this run first found alerts flowing.
      expect(status.outages).toEqual([{ ...history.outages[0], to: iso(START + 10_000) }, older]);
      expect(status.alerts).toEqual({ flowing: true, since: iso(START + 10_000), reason: null });
      expect(status.doorbells).toEqual([expect.objectContaining({ subscribed: true, fault: null })]);
      expect(run.shown).toEqual([false]);
      expect(warnings(run)).toEqual([]);
    });

    it('keeps the outage under way at the last shutdown as one, when the sensor is still waiting to decide', async () => {
      const run = launch();
      await settle('the first read', () => failedReads(run) > 0 || run.sink.started.length > 0);
      while (run.elapsed() < 20_000) {
        await nextRead(run);
      }
      await becomeReadable();
      await nextRead(run);
      await settle('the first write', () => run.sink.ended > 0);
      expect((await written()).outages).toEqual(history.outages);

      jest.advanceTimersByTime(MINUTE - run.elapsed());
      expect(run.shown).toEqual([true]);
      jest.advanceTimersByTime(1_000);
      await settle('the write of the decision', () => run.sink.ended === run.sink.started.length && run.sink.ended >= 2);
      const decided = await written();
      expect({ alerts: decided.alerts, outages: decided.outages }).toEqual(history);
      expect(warnings(run)).toEqual(['Doorbell alerts stopped: Front Door down. Do something.']);
    });

    it('gives it up after a minute with one warning, and writes from then on', async () => {
      const run = launch();
      await settle('the first read', () => failedReads(run) > 0 || run.sink.started.length > 0);
      run.rule.setDown(DOORBELL.deviceId, false);
      while (run.elapsed() < MINUTE - 2_000) {
        await nextRead(run);
      }
      expect([run.sink.started.length, warnings(run)]).toEqual([0, []]);
      await nextRead(run);
      await settle('the first write', () => run.sink.ended > 0);

      expect(run.elapsed()).toBe(MINUTE);
      expect(warnings(run)).toEqual([
        `Could not read ${statusPath()} for a minute (ELOOP): the Doorbell Alerts outages before this start are given up, and the file is written anew.`,
      ]);
      expect(await written()).toMatchObject({ pid: process.pid, outages: [], alerts: { flowing: true } });
      expect(run.shown).toEqual([false]);

      run.status.board.ring(DOORBELL.deviceId);
      jest.advanceTimersByTime(1_000);
      await settle('the ring written', () => run.sink.ended === 2);
      expect((await written()).doorbells[0]?.lastRingAt).not.toBeNull();
      jest.advanceTimersByTime(2 * MINUTE);
      await settle('the heartbeats', () => run.sink.ended === run.sink.started.length);
      expect(warnings(run)).toHaveLength(1);
      expect(failedReads(run)).toBe(MINUTE / 2_000);
    });

    it('leaves a file still awaited as it is at shutdown, and no timer behind', async () => {
      const run = launch();
      await settle('the first read', () => failedReads(run) > 0 || run.sink.started.length > 0);
      await nextRead(run);
      run.rule.dispose();
      await run.status.stop();
      launched = undefined;
      jest.advanceTimersByTime(2 * MINUTE);
      await sleep(50);

      expect(jest.getTimerCount()).toBe(0);
      expect(run.sink.started).toEqual([]);
      expect((await lstat(statusPath())).isSymbolicLink()).toBe(true);
      expect([failedReads(run), warnings(run)]).toEqual([2, []]);
    });
  });

  it('reads a missing file as no history, without a warning, and writes at once', async () => {
    const run = launch();
    await settle('the first write', () => run.sink.ended > 0);

    expect(run.elapsed()).toBe(0);
    expect(await written()).toMatchObject({ pid: process.pid, outages: [], alerts: { flowing: true, reason: null } });
    expect([failedReads(run), warnings(run)]).toEqual([0, []]);
  });

  it('writes a burst of dropped notifications within a second, while nothing else changes, and not on their way', async () => {
    const run = launch();
    await settle('the first write', () => run.sink.ended > 0);
    jest.advanceTimersByTime(5_000);
    const receiver = new PushReceiver({
      host: '127.0.0.1',
      port: 0,
      secret: 's'.repeat(43),
      log: run.log,
      onNotification: () => undefined,
      onDropped: (cause) => run.status.board.dropped(cause),
    });
    const { port } = await receiver.start();
    try {
      for (let i = 0; i < 50; i += 1) {
        expect(await post(port, `/push/${'s'.repeat(43)}`, 'not a notification')).toBe(400);
      }
      // Answered, and the fake clock has not moved: nothing was written on their way.
      expect(run.sink.started).toHaveLength(1);

      jest.advanceTimersByTime(1_000);
      await settle('a write', () => run.sink.ended === run.sink.started.length);
      expect((await written()).dropped).toEqual({ invalid: 50, duplicate: 0, unconfigured: 0, stale: 0, flood: 0 });
      expect(run.sink.started).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });
});

/** A POST of `body` as JSON over loopback, on a connection of its own; resolves with the status. */
function post(port: number, path: string, body: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
    });
    req.once('error', reject);
    req.end(body);
  });
}
