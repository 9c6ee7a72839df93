/**
 * A data file that cannot be read is not a missing file. Here the reads fail for want of a file
 * descriptor (a real EMFILE: this process's limit on open files lowered while it runs out, as a flood
 * of connections does to a Homebridge host) just after another process changed the file. Nothing may
 * conclude "no file" from that, then or once descriptors are free again: the session is kept, the push
 * secrets and the installation (spent codes) are never made anew.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { chmod, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA_FILES, dataFolderPath } from '../../src/storage/data-folder.js';
import { FileReadError } from '../../src/storage/file-errors.js';
import type { StoredSession } from '../../src/session/session-store.js';
import { SessionWatcher } from '../../src/session/session-watcher.js';
import { withoutFreeDescriptors } from '../support/system-faults.js';
import { eachTest } from '../support/each-test.js';
import { temporaryStorage } from '../../scripts/lib/platform-harness.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { aProcess } from './fixtures/a-process.js';
import { fakePolls, pollOnce } from './fixtures/fake-polls.js';
import { sampleSession } from './fixtures/sample-session.js';

const storage = eachTest('storage', temporaryStorage, (folder) => folder.remove());

const dataFile = (name: string) => readFile(join(dataFolderPath(storage().path), name), 'utf8');

/** What a promise settled with: its value, or the error it was rejected with. */
function settled<T>(promise: Promise<T>): Promise<T | unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) => error,
  );
}

const emfile = expect.objectContaining({ name: 'FileReadError', code: 'EMFILE', message: expect.stringContaining('too many open files (EMFILE)') });

describe('a file that could not be read', () => {
  it('is an error, not a missing session, and is read again once it can be', async () => {
    const plugin = aProcess(storage().path);
    const other = aProcess(storage().path);
    await other.store.saveSession(sampleSession());
    await expect(plugin.store.readSession()).resolves.toMatchObject({ login: { token: 'session-token' } });
    await other.store.saveSession(sampleSession({ login: { token: 'second-token' } }));

    const during = await withoutFreeDescriptors(() => settled(plugin.store.readSession()));

    expect(during).toBeInstanceOf(FileReadError);
    expect(during).toEqual(emfile);
    await expect(plugin.store.readSession()).resolves.toMatchObject({ login: { token: 'second-token' } });
    await expect(plugin.store.findSession(sampleSession().email, sampleSession().accountServer)).resolves.toBeDefined();
  });

  it('never has push.json made anew: the receiver secret and the relay topic stay those registered', async () => {
    const other = aProcess(storage().path);
    const stored = await other.pushSecrets.secrets();
    const onDisk = await dataFile(DATA_FILES.push);
    const plugin = aProcess(storage().path);

    const during = await withoutFreeDescriptors(() => settled(plugin.pushSecrets.secrets()));

    await expect(plugin.pushSecrets.secrets()).resolves.toEqual(stored);
    expect(await dataFile(DATA_FILES.push)).toBe(onDisk);
    expect(during).toEqual(emfile);
  });

  it('never has installation.json made anew: the client id stays, and a spent code stays spent', async () => {
    const other = aProcess(storage().path);
    const clientId = await other.store.clientIdFor('you@example.com');
    await other.store.spendCode('111111');
    const onDisk = await dataFile(DATA_FILES.installation);
    const plugin = aProcess(storage().path);

    const during = await withoutFreeDescriptors(async () => [
      await settled(plugin.store.clientIdFor('you@example.com')),
      await settled(plugin.store.claimCode('111111')),
      await settled(plugin.store.codeState('111111')),
    ]);

    await expect(plugin.store.clientIdFor('you@example.com')).resolves.toBe(clientId);
    await expect(plugin.store.codeState('111111')).resolves.toBe('spent');
    expect(await dataFile(DATA_FILES.installation)).toBe(onDisk);
    expect(during).toEqual([emfile, emfile, emfile]);
  });

  it('is no news to the session watcher: the session in use is kept, and the new one reported once it can be read', async () => {
    const plugin = aProcess(storage().path);
    const reports: Array<StoredSession | undefined> = [];
    const watcher = new SessionWatcher(plugin.store, plugin.log, (session) => reports.push(session));
    const other = aProcess(storage().path);
    await other.store.saveSession(sampleSession());
    fakePolls();
    await watcher.start();
    try {
      // Signed in anew on the settings page: the file changes, and the plugin cannot read it for a while.
      await other.store.saveSession(sampleSession({ login: { token: 'second-token' } }));
      await withoutFreeDescriptors(async () => {
        pollOnce();
        await pollUntil(() => plugin.log.lines.some(({ level }) => level === 'warn'), Boolean, 5_000, 'the failed read');
      });

      expect(reports).toEqual([]);
      pollOnce();
      await pollUntil(() => reports.length, (count) => count > 0, 5_000, 'the new session reported');
      expect(reports.map((session) => session?.login.token)).toEqual(['second-token']);
      const warnings = plugin.log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message);
      expect(warnings).toEqual([expect.stringMatching(/^Could not read .*session\.json: too many open files \(EMFILE\)\..* the session in use is kept\.$/)]);
    } finally {
      await watcher.stop();
      jest.useRealTimers();
    }
  });
});

describe('a data folder that could not be looked at', () => {
  it('is looked at again at the next read, and made private to its owner then', async () => {
    // A stat that fails for a reason other than absence: a symbolic link to itself (ELOOP). Running
    // out of file descriptors would not do: a stat needs none.
    const folder = dataFolderPath(storage().path);
    await symlink(folder, folder);
    const plugin = aProcess(storage().path);
    expect(await settled(plugin.store.readSession())).toBeInstanceOf(FileReadError);

    // Then the folder is there, open to everyone, as a backup restored by hand may leave it.
    await rm(folder);
    await mkdir(folder);
    await chmod(folder, 0o755);
    await writeFile(join(folder, DATA_FILES.session), JSON.stringify(sampleSession()), { mode: 0o600 });

    await expect(plugin.store.readSession()).resolves.toMatchObject({ login: { token: 'session-token' } });
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
  });
});
