/**
 * The data folder is shared by two processes (the plugin and the Homebridge UI's plugin server): a
 * change made by one is seen by the other at its next read, and writes from both never lose each
 * other's updates.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DATA_FILES, dataFolderPath, openDataFolder } from '../../src/storage/data-folder.js';
import { hashCode, SessionStore, type StoredSession } from '../../src/session/session-store.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';

const execFileAsync = promisify(execFile);
const SPEND_CODES = new URL('../session/fixtures/spend-codes.ts', import.meta.url).pathname;

let storagePath: string;

beforeEach(async () => {
  storagePath = await mkdtemp(join(tmpdir(), 'json-file-'));
});

afterEach(async () => {
  await rm(storagePath, { recursive: true, force: true });
});

function newStore(): SessionStore {
  const log = createTestLogger();
  return new SessionStore(openDataFolder(storagePath, log), log);
}

function session(email: string): StoredSession {
  return {
    accountServer: 'https://account.example.com',
    regionUrl: 'https://eu.account.example.com',
    email,
    loggedInAt: '2026-11-22T10:00:00.000Z',
    codeHash: hashCode('012345'),
    login: { token: `token-of-${email}` },
  };
}

describe('reading a file another process changes', () => {
  it('sees a session written, replaced and removed by another store at its next read', async () => {
    const plugin = newStore();
    const ui = newStore();
    await expect(plugin.readSession()).resolves.toBeUndefined();

    await ui.saveSession(session('first@example.com'));
    await expect(plugin.readSession()).resolves.toEqual(session('first@example.com'));

    await ui.saveSession(session('second@example.com'));
    await expect(plugin.readSession()).resolves.toEqual(session('second@example.com'));

    await ui.removeSession();
    await expect(plugin.readSession()).resolves.toBeUndefined();
  });

  it('sees an edit made in place, not only an atomic replacement', async () => {
    const store = newStore();
    await store.saveSession(session('first@example.com'));
    await store.readSession();

    const file = join(dataFolderPath(storagePath), DATA_FILES.session);
    await writeFile(file, JSON.stringify(session('edited@example.com')));

    await expect(store.readSession()).resolves.toEqual(session('edited@example.com'));
  });

  it('sees a rewrite that leaves the inode, size and modification time as they were', async () => {
    const store = newStore();
    const file = join(dataFolderPath(storagePath), DATA_FILES.session);
    // Whole seconds, which every file system keeps exactly.
    const stamped = new Date('2026-11-22T10:00:00.000Z');
    await store.saveSession(session('first@example.com'));
    await utimes(file, stamped, stamped);
    await expect(store.readSession()).resolves.toEqual(session('first@example.com'));

    // What a rewrite within one tick of a coarse clock leaves, by a file of the same size on the inode
    // the removed one freed: the same status, other content.
    const before = await stat(file);
    await writeFile(file, `${JSON.stringify(session('other@example.com'), null, 2)}\n`);
    await utimes(file, stamped, stamped);
    const after = await stat(file);
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);

    await expect(store.readSession()).resolves.toEqual(session('other@example.com'));
  });
});

describe('writing from several processes', () => {
  it('loses no spent code when three processes write installation.json at the same time', async () => {
    const perProcess = 15;
    const prefixes = ['1', '2', '3'];
    // Every process is up before the first write: tsx takes a while to load.
    const startAt = Date.now() + 3_000;

    await Promise.all(prefixes.map((prefix) => runSpendCodes(prefix, perProcess, startAt)));

    const store = newStore();
    const notSpent = [];
    for (const code of prefixes.flatMap((prefix) => codes(prefix, perProcess))) {
      if (!(await store.isCodeSpent(code))) {
        notSpent.push(code);
      }
    }
    expect(notSpent).toEqual([]);
    const installation = JSON.parse(await readFile(join(dataFolderPath(storagePath), DATA_FILES.installation), 'utf8'));
    expect(installation.spentCodeHashes).toHaveLength(prefixes.length * perProcess);
  }, 60_000);
});

/** The codes spend-codes.ts marks: 6 digits, `<prefix>00<index>`. */
function codes(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}00${String(index).padStart(3, '0')}`);
}

/** Another Node process, with the TypeScript loader the repository's scripts use. */
async function runSpendCodes(prefix: string, count: number, startAt: number): Promise<void> {
  const args = ['--import', 'tsx', SPEND_CODES, storagePath, `${prefix}00`, String(count), String(startAt)];
  await execFileAsync(process.execPath, args, { timeout: 50_000 });
}
