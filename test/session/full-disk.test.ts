/**
 * A sign-in on a full disk: the service answers, its code is spent, and the session cannot be written.
 * The login is not thrown away where it can be used: the plugin, signing in with account.code, keeps
 * the session for this run and says to free space and sign in again; the settings page says the same
 * and keeps nothing. The disk is a small tmpfs in a private mount namespace
 * (test/support/system-faults.ts), filled the moment the simulator answers the login, so the writes
 * after it fail with the kernel's own ENOSPC.
 */
import { describe, expect, it } from '@jest/globals';
import { closeSync, openSync, writeSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SettingsError } from '../../homebridge-ui/settings-error.js';
import { SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import type { RecordedRequest } from '../../simulator/types.js';
import { dataFolderPath, openDataFolder } from '../../src/storage/data-folder.js';
import { PushSecretStore } from '../../src/session/push-secrets.js';
import { FAST_RETRY } from '../homebridge-ui/settings-page.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { ACCOUNT, delay, launchPlatform, platformConfig, temporaryStorage, untilPortFree, waitFor } from '../../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from '../support/platform-testbed.js';
import { smallTmpfs } from '../support/system-faults.js';
import { eachTest, useSimulator } from '../support/each-test.js';

const DISK_BYTES = 256 * 1024;
const FILL_CHUNK = Buffer.alloc(64 * 1024);
/** Longer than two looks of the plugin at session.json: a missing file must not sign it out. */
const TWO_POLLS_MS = 2_500;

const FREE_SPACE = "free space on the disk that holds Homebridge's storage (or make that folder writable)";

/** Fills the disk `storagePath` is on, to the last byte. */
function fillDisk(storagePath: string): void {
  const fd = openSync(join(storagePath, 'filler'), 'a');
  try {
    for (let written = 0; written <= DISK_BYTES; written += FILL_CHUNK.length) {
      writeSync(fd, FILL_CHUNK);
    }
    throw new Error(`${storagePath} took more than ${DISK_BYTES} bytes: it is not the small disk`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') {
      throw error;
    }
  } finally {
    closeSync(fd);
  }
}

/** A small disk for each test, and a watch on the simulator that fills it once a login is answered. */
function useDiskFilledAtLogin(): { disk: () => string; onRequest: (request: RecordedRequest) => void } {
  const mounted = eachTest(
    'small disk',
    async () => {
      const root = await temporaryStorage();
      try {
        return { root, mount: await smallTmpfs(root.path, DISK_BYTES) };
      } catch (error) {
        await root.remove();
        throw error;
      }
    },
    async ({ root, mount }) => {
      await mount.stop();
      await root.remove();
    },
  );
  const disk = () => mounted().mount.path;
  return {
    disk,
    onRequest: ({ route, status }) => {
      if (route === 'login' && status === 200) {
        fillDisk(disk());
      }
    },
  };
}

describe('signing in on the settings page when the disk is full', () => {
  const full = useDiskFilledAtLogin();
  const sim = useSimulator({ accounts: [{ ...ACCOUNT }], onRequest: (request) => full.onRequest(request) });

  it('says so, asks to free space and sign in again, clears the spent code, and keeps nothing', async () => {
    const log = createTestLogger('UI');
    const requests = new SettingsRequests({ storagePath: full.disk(), readPlatformBlock: async () => undefined, log, retry: FAST_RETRY });
    const fields = { serverUrl: sim().accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1', code: ACCOUNT.code };

    const error = (await requests.signIn(fields).then(
      () => undefined,
      (reason: unknown) => reason,
    )) as SettingsError;

    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toBe(
      `Signed in, but the session could not be saved (the disk is full (ENOSPC)), so nothing was kept: ${FREE_SPACE}, ` +
        'then request a new verification code in the doorbell app and sign in with it above.',
    );
    expect(error.details).toEqual({ codeSpent: true });
    expect(sim().requestsTo('login')).toHaveLength(1);
    // No session, and no temp file of one, is left on the disk.
    expect((await readdir(dataFolderPath(full.disk()))).filter((name) => name.includes('session'))).toEqual([]);
    expect(await requests.account()).toEqual({ state: 'signed-out' });
    expect(JSON.stringify(log.lines)).not.toContain(sim().issuedTokens[0] as string);
  });
});

describe('the plugin signing in with account.code when the disk is full', () => {
  const full = useDiskFilledAtLogin();
  const testbed = usePlatformTestbed(undefined, { onSimulatorRequest: (request) => full.onRequest(request) });

  it('keeps the session for this run, subscribes every doorbell, and says to free space and sign in again', async () => {
    // An installation that ran before: its push secrets are there (a full disk could not take new ones).
    const earlierLog = createTestLogger('earlier run');
    await new PushSecretStore(openDataFolder(full.disk(), earlierLog), earlierLog).secrets();

    const platform = launchPlatform(platformConfig(testbed.sim, testbed.pushPort), full.disk());
    try {
      await waitFor(() => allConfirmed(platform), 'every doorbell subscribed with the unsaved session');
      await delay(TWO_POLLS_MS);

      expect(allConfirmed(platform)).toBe(true);
      expect(logged(platform, 'Signed out on the settings page')).toBe(false);
      expect(testbed.sim.requestsTo('login')).toHaveLength(1);
      const warnings = platform.log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message);
      expect(warnings).toContain(
        'Signed in as porch+light (porch+light@example.com), but the session could not be saved (the disk is full (ENOSPC)): ' +
          `it is used until Homebridge restarts. To keep it, ${FREE_SPACE}, then sign in again: ` +
          "request a new verification code in the doorbell app and sign in with it on the plugin's settings page in the Homebridge UI " +
          '(without the UI: put it in account.code and restart Homebridge).',
      );
      expect(platform.log.lines.filter(({ level }) => level === 'error')).toEqual([]);
    } finally {
      platform.test.shutdown();
      await untilPortFree(testbed.pushPort, 2_000);
    }
  });
});
