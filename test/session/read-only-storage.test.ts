/**
 * Storage that cannot be written (a read-only mount, a backup restored by another user) is still read:
 * the session, the push secrets and the spent codes are used as they are, modes are changed only where
 * they are wrong and only if they can be, and the log says once that writes will fail. The mount is a
 * real read-only bind mount, made in a private mount namespace (test/support/system-faults.ts): as
 * root, a chmod or a write would otherwise always work.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { chmod, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretMaskingLogger } from '../../src/log.js';
import { DATA_FILES, dataFolderPath, openDataFolder } from '../../src/storage/data-folder.js';
import { PushSecretStore } from '../../src/session/push-secrets.js';
import { SessionStore } from '../../src/session/session-store.js';
import { signInWithCode } from '../../src/session/sign-in.js';
import { eachTest } from '../support/each-test.js';
import { runUntil } from '../support/fake-clock.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';
import { ACCOUNT, launchPlatform, platformConfig, temporaryStorage, untilPortFree, waitFor } from '../../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from '../support/platform-testbed.js';
import { readOnlyView, type PrivateMount } from '../support/system-faults.js';
import { aProcess } from './fixtures/a-process.js';
import { sampleSession } from './fixtures/sample-session.js';

const CANNOT_BE_WRITTEN = /doorbell-motion cannot be written \(the storage is read-only \(EROFS\)\): the session and push secrets in it are used/;

const views: PrivateMount[] = [];

afterEach(async () => {
  await Promise.all(views.splice(0).map((view) => view.stop()));
});

async function readOnly(folder: string): Promise<string> {
  const view = await readOnlyView(folder);
  views.push(view);
  return view.path;
}

const warningsOf = (log: TestLogger) => log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message);

describe('a data folder on read-only storage', () => {
  const storage = eachTest('storage', temporaryStorage, (folder) => folder.remove());

  /** What a plugin that ran here before left: a session, push secrets, a spent code. */
  async function storedEarlier() {
    const earlier = aProcess(storage().path);
    await earlier.store.saveSession(sampleSession());
    await earlier.store.spendCode('111111');
    return { secrets: await earlier.pushSecrets.secrets(), clientId: await earlier.store.clientIdFor('you@example.com') };
  }

  it('is read as it is, with one warning that writes will fail; a write fails at once, saying why', async () => {
    const earlier = await storedEarlier();
    const reader = aProcess(await readOnly(storage().path));

    await expect(reader.store.readSession()).resolves.toEqual(sampleSession());
    await expect(reader.store.findSession('you@example.com', 'https://account.example.com')).resolves.toEqual(sampleSession());
    await expect(reader.pushSecrets.secrets()).resolves.toEqual(earlier.secrets);
    await expect(reader.store.codeState('111111')).resolves.toBe('spent');
    await expect(reader.store.clientIdFor('you@example.com')).resolves.toBe(earlier.clientId);

    // "At once" is checked on a fake clock that never moves: the write must fail without setting a
    // timer (as the lock's retries would) and without any time passing, however slow the machine.
    jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
    try {
      let failure: unknown;
      void reader.store.saveSession(sampleSession({ email: 'other@example.com' })).then(
        () => (failure = 'saved'),
        (error: unknown) => (failure = error),
      );
      await runUntil(() => failure !== undefined || jest.getTimerCount() > 0, 'the write to end or wait on a timer', 0);
      expect(jest.getTimerCount()).toBe(0);
      expect(failure).toMatchObject({ code: 'EROFS' });
    } finally {
      jest.useRealTimers();
    }
    expect(warningsOf(reader.log)).toEqual([expect.stringMatching(CANNOT_BE_WRITTEN)]);
  });

  it('with modes that let others in, as a restored backup may have: still read, each mode warned about once', async () => {
    await storedEarlier();
    const folder = dataFolderPath(storage().path);
    await chmod(folder, 0o755);
    await chmod(join(folder, DATA_FILES.session), 0o644);
    const reader = aProcess(await readOnly(storage().path));

    await expect(reader.store.readSession()).resolves.toEqual(sampleSession());
    await expect(reader.store.readSession()).resolves.toEqual(sampleSession());
    await expect(reader.pushSecrets.secrets()).resolves.toBeDefined();

    expect(warningsOf(reader.log)).toEqual([
      expect.stringMatching(/^Could not make .*doorbell-motion private to its owner \(the storage is read-only \(EROFS\)\); its files are read as they are\.$/),
      expect.stringMatching(CANNOT_BE_WRITTEN),
      expect.stringMatching(/^Could not make .*session\.json private to its owner \(the storage is read-only \(EROFS\)\); it is read as it is\.$/),
    ]);
    // Nothing could change them: the mount is read-only for root too.
    expect((await stat(folder)).mode & 0o777).toBe(0o755);
  });

  it('on writable storage, changes a mode only where it is wrong', async () => {
    await storedEarlier();
    const folder = dataFolderPath(storage().path);
    await chmod(join(folder, DATA_FILES.session), 0o644);
    const { ctimeMs: folderChangedAt } = await stat(folder);
    const reader = aProcess(storage().path);

    await expect(reader.store.readSession()).resolves.toEqual(sampleSession());

    expect((await stat(join(folder, DATA_FILES.session))).mode & 0o777).toBe(0o600);
    expect((await stat(folder)).ctimeMs).toBe(folderChangedAt);
    expect(warningsOf(reader.log)).toEqual([]);
  });
});

describe('the plugin on read-only storage', () => {
  const testbed = usePlatformTestbed();

  it('uses the stored session and push secrets: no sign-in, the registered address kept, every doorbell subscribed', async () => {
    const log = createTestLogger('earlier run');
    const earlier = new SessionStore(openDataFolder(testbed.storagePath, log), log);
    const account = { serverUrl: testbed.sim.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };
    await signInWithCode(account, ACCOUNT.code, { store: earlier, log: new SecretMaskingLogger(log) });
    const { receiverSecret } = await new PushSecretStore(openDataFolder(testbed.storagePath, log), log).secrets();

    const platform = launchPlatform(platformConfig(testbed.sim, testbed.pushPort), await readOnly(testbed.storagePath));
    try {
      await waitFor(() => allConfirmed(platform), 'every doorbell subscribed');

      expect(testbed.sim.requestsTo('login')).toHaveLength(1);
      expect(testbed.sim.pushToken).toContain(receiverSecret);
      expect(warningsOf(platform.log).filter((message) => CANNOT_BE_WRITTEN.test(message))).toHaveLength(1);
      expect(platform.log.lines.filter(({ level }) => level === 'error')).toEqual([]);
    } finally {
      platform.test.shutdown();
      await untilPortFree(testbed.pushPort, 2_000);
    }
  });
});
