import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDataFolder } from '../../src/session/data-folder.js';
import { SessionStore, type StoredSession } from '../../src/session/session-store.js';
import { SessionWatcher } from '../../src/session/session-watcher.js';
import { createTestLogger } from '../support/homebridge-api.js';
import { pollUntil } from '../support/poll.js';
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
  watcher = new SessionWatcher(folder, new SessionStore(folder, log), log, (session) => reports.push(session));
  return { watcher, reports };
}

it('reports a session another process writes, then its removal, each once', async () => {
  const { watcher, reports } = watchSessions();
  await watcher.start();
  const other = processStore();

  await other.saveSession(sampleSession());
  await pollUntil(() => reports.length, (count) => count === 1, 5_000, 'the sign-in reported');
  expect(reports[0]?.login.token).toBe('session-token');

  await other.removeSession();
  await pollUntil(() => reports.length, (count) => count === 2, 5_000, 'the sign-out reported');
  expect(reports[1]).toBeUndefined();
  await sleep(QUIET_MS);
  expect(reports).toHaveLength(2);
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
