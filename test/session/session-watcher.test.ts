import { afterEach, beforeEach, expect, it, jest } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore, type StoredSession } from '../../src/session/session-store.js';
import { SessionWatcher } from '../../src/session/session-watcher.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { fakePolls, pollOnce } from './fixtures/fake-polls.js';
import { sampleSession } from './fixtures/sample-session.js';

/** Longer than the watcher's poll and debounce. */
const QUIET_MS = 2_500;

let root: string;
let storagePath: string;
let watcher: SessionWatcher | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'session-watcher-'));
  storagePath = join(root, 'storage');
  await mkdir(storagePath);
});

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  await rm(root, { recursive: true, force: true });
});

/** A process's view of the data folder: its own folder object and store, as the plugin and the UI server each have. */
function processStore(): SessionStore {
  const log = createTestLogger();
  return new SessionStore(openDataFolder(storagePath, log), log);
}

/** A watcher in the plugin's process, recording what it reports. */
function watchSessions(): { watcher: SessionWatcher; reports: Array<StoredSession | undefined> } {
  const log = createTestLogger();
  const folder = openDataFolder(storagePath, log);
  const reports: Array<StoredSession | undefined> = [];
  watcher = new SessionWatcher(new SessionStore(folder, log), log, (session) => reports.push(session));
  return { watcher, reports };
}

it('reports a session another process writes once, then its removal', async () => {
  const { watcher, reports } = watchSessions();
  await watcher.start();
  const other = processStore();

  await other.saveSession(sampleSession());
  await pollUntil(() => reports.length, (count) => count === 1, 5_000, 'the sign-in reported');
  expect(reports[0]?.login.token).toBe('session-token');
  // An unchanged file is not reported again.
  await sleep(QUIET_MS);
  expect(reports).toHaveLength(1);

  await other.removeSession();
  await pollUntil(() => reports.length, (count) => count >= 2, 5_000, 'the sign-out reported');
  // While there is no file, every poll says so again; never a session.
  await sleep(QUIET_MS);
  expect(reports.slice(1).length).toBeGreaterThanOrEqual(2);
  expect(reports.slice(1).every((session) => session === undefined)).toBe(true);
});

it('reports no session when one was written and removed between two polls', async () => {
  fakePolls();
  try {
    const { watcher, reports } = watchSessions();
    await watcher.start();
    const other = processStore();
    // The poll before and the poll after both find no file, as when this process signs in with a code
    // and the settings page signs out a moment later.
    await other.saveSession(sampleSession());
    await other.removeSession();
    pollOnce();
    await pollUntil(() => reports.length, (count) => count >= 1, 5_000, 'the missing session reported');
    expect(reports.every((session) => session === undefined)).toBe(true);
  } finally {
    await watcher?.stop();
    jest.useRealTimers();
  }
});

it('watches nothing when stopped while it was still starting', async () => {
  const { watcher, reports } = watchSessions();
  // Homebridge can shut down before the data folder is ready: the watcher must not start after that.
  const starting = watcher.start();
  await watcher.stop();
  await starting;

  await processStore().saveSession(sampleSession());
  await sleep(QUIET_MS);
  expect(reports).toEqual([]);
});
