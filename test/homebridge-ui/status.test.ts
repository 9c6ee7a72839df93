/**
 * The settings page's `/status` against a running platform on the same storage, as the Homebridge UI's
 * plugin server reads what the plugin in the Homebridge process writes: running only while that
 * process lives and keeps writing. And `/account` for a set-up with a doorbell access token alone.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dataFolderPath, openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { STALE_AFTER_MS, STATUS_TIMING, type DeliveryStatus } from '../../src/status/delivery-status.js';
import { sampleSession } from '../session/fixtures/sample-session.js';
import { ACCOUNT, DOORBELLS, temporaryStorage, waitFor } from '../../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from '../support/platform-testbed.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { FAST_RETRY } from './settings-page.js';
import { FOLLOW_GRACE_MS, SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import type { StatusAnswer } from '../../homebridge-ui/settings-requests.js';

const [FRONT, BACK] = DOORBELLS.map(({ deviceId }) => deviceId);

/** A pid no process has: one that just exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid as number;
}

describe('the settings page: the running plugin\'s status', () => {
  const testbed = usePlatformTestbed();

  function settingsRequests(block: Record<string, unknown> = {}): SettingsRequests {
    return new SettingsRequests({ storagePath: testbed.storagePath, readPlatformBlock: async () => block, log: createTestLogger('UI'), retry: FAST_RETRY });
  }

  const writeStatus = async (status: DeliveryStatus | string) => {
    await mkdir(dataFolderPath(testbed.storagePath), { recursive: true, mode: 0o700 });
    await writeFile(join(dataFolderPath(testbed.storagePath), 'status.json'), typeof status === 'string' ? status : JSON.stringify(status), { mode: 0o600 });
  };

  it('answers not running before the plugin ever wrote a status', async () => {
    expect(await settingsRequests().status()).toEqual({ running: false });
  });

  it('answers what the running plugin wrote, running, then the motion it delivered', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const requests = settingsRequests();

    const status = await pollUntil(() => requests.status(), (answer) => answer.running && subscribedAll(answer), 5_000, 'a running, subscribed status');
    expect(status).toMatchObject({
      running: true,
      pid: process.pid,
      pushMode: 'direct',
      receiver: { listening: true },
      session: 'signed-in',
      doorbells: [
        { deviceId: FRONT, name: 'Front Door', subscribed: true, fault: null, lastMotionAt: null },
        { deviceId: BACK, name: 'Back Door', subscribed: true, fault: null, lastMotionAt: null },
      ],
    });

    await testbed.sim.deliverMotion(BACK);
    const moved = await pollUntil(() => requests.status(), (answer) => 'doorbells' in answer && answer.doorbells[1]?.lastMotionAt !== null, 5_000, 'the motion');
    expect(JSON.stringify(moved)).not.toContain(testbed.sim.issuedTokens[0] as string);
  });

  it('answers not running for a status whose process is gone, or that nobody rewrote for twice the longest wait between writes', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const requests = settingsRequests();
    const written = await pollUntil(() => requests.status(), (answer) => answer.running && subscribedAll(answer), 5_000, 'a running, subscribed status');
    await testbed.stop(platform);
    const status = { ...(written as DeliveryStatus & { running?: boolean }) };
    delete status.running;

    await writeStatus({ ...status, pid: await deadPid() });
    expect(await requests.status()).toMatchObject({ running: false, session: 'signed-in' });

    await writeStatus({ ...status, updatedAt: new Date(Date.now() - STALE_AFTER_MS - 1_000).toISOString() });
    expect(await requests.status()).toMatchObject({ running: false });

    // A write that is late by most of an interval, on a busy machine, does not make it read as stopped.
    expect(STALE_AFTER_MS).toBe(2 * STATUS_TIMING.maxIntervalMs);
    await writeStatus({ ...status, updatedAt: new Date(Date.now() - STATUS_TIMING.maxIntervalMs * 1.8).toISOString() });
    expect(await requests.status()).toMatchObject({ running: true });
  });

  describe("a sign-in on the page, and the plugin's session", () => {
    const account = () => ({ serverUrl: testbed.sim.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1' });
    /** The platform signs in only as the page does: its account has no code. */
    const launchWithoutCode = () => testbed.launch({ overrides: { account: account() } });
    const pageSignIn = (requests: SettingsRequests, code: string) => {
      testbed.sim.addAccount({ email: ACCOUNT.email, code });
      return requests.signIn({ ...account(), code });
    };
    const storedSession = async () => (await new SessionStore(openDataFolder(testbed.storagePath, createTestLogger('UI')), createTestLogger('UI')).readSession())?.loggedInAt;
    const SIGNED_OUT = ['signed-out', 'expired', 'token-refused'];

    it('names the sign-in of the session the running plugin uses, and no sign-in of the page to wait for', async () => {
      const platform = testbed.launch();
      await waitFor(() => allConfirmed(platform), 'subscriptions');
      const requests = settingsRequests({ account: account() });

      const status = await pollUntil(() => requests.status(), (answer) => answer.running && subscribedAll(answer), 5_000, 'a running, subscribed status');
      expect(status).toMatchObject({ session: 'signed-in', signedInAt: await storedSession() });
      expect(status).not.toHaveProperty('pageSignIn');
    });

    it('follows a sign-in on the page: the plugin is signed out in no answer without the page\'s sign-in to wait for', async () => {
      const platform = launchWithoutCode();
      const requests = settingsRequests({ account: account() });
      await pollUntil(() => requests.status(), (answer) => answer.running && 'session' in answer && answer.session === 'signed-out', 5_000, 'signed out');

      await pageSignIn(requests, '246810');
      const answers: StatusAnswer[] = [];
      const signedInAt = await storedSession();
      await pollUntil(
        async () => {
          const answer = await requests.status();
          answers.push(answer);
          return answer;
        },
        (answer) => 'session' in answer && answer.session === 'signed-in' && subscribedAll(answer),
        5_000,
        'the plugin on the new session',
        10,
      );
      await waitFor(() => allConfirmed(platform), 'subscriptions');

      // Each answer either shows the plugin with a session, or says it is waiting for the page's.
      expect(answers.filter((answer) => 'session' in answer && SIGNED_OUT.includes(answer.session) && answer.pageSignIn !== 'waiting')).toEqual([]);
      expect(answers.at(-1)).toMatchObject({ signedInAt });
      expect(answers.at(-1)).not.toHaveProperty('pageSignIn');
    });

    it('says the plugin has yet to follow a sign-in on the page, or has not for 30 s; a status or set-up that cannot tell, nothing', async () => {
      const platform = launchWithoutCode();
      const requests = settingsRequests({ account: account() });
      await pollUntil(() => requests.status(), (answer) => answer.running && 'session' in answer && answer.session === 'signed-out', 5_000, 'signed out');
      // Its status.json stays as it was, from a live process, written just now: a plugin about to follow.
      await testbed.stop(platform);

      await pageSignIn(requests, '246810');
      expect(await requests.status()).toMatchObject({ running: true, session: 'signed-out', signedInAt: null, pageSignIn: 'waiting' });

      const store = new SessionStore(openDataFolder(testbed.storagePath, createTestLogger('UI')), createTestLogger('UI'));
      const session = await store.readSession();
      await store.saveSession({ ...(session as NonNullable<typeof session>), loggedInAt: new Date(Date.now() - FOLLOW_GRACE_MS - 1_000).toISOString() });
      expect(await requests.status()).toMatchObject({ running: true, pageSignIn: 'not-followed' });

      // As an older plugin wrote it: no signedInAt.
      const older = { ...((await requests.status()) as DeliveryStatus & { running?: boolean; pageSignIn?: unknown }) };
      delete older.running;
      delete older.pageSignIn;
      delete older.signedInAt;
      await writeStatus(older);
      expect(await requests.status()).not.toHaveProperty('pageSignIn');
      expect(await settingsRequests({ account: account(), doorbellAccessToken: 'token-SECRET-1234' }).status()).not.toHaveProperty('pageSignIn');
    });
  });

  it('answers not running for a status.json that is not what the plugin writes', async () => {
    await settingsRequests().status();
    await writeStatus('{"pid": 1, "session": "owned"}');

    expect(await settingsRequests().status()).toEqual({ running: false });
  });
});

describe('the settings page: a set-up with a doorbell access token', () => {
  it('answers the token state, whatever session.json holds', async () => {
    const storage = await temporaryStorage();
    try {
      const log = createTestLogger('UI');
      await new SessionStore(openDataFolder(storage.path, log), log).saveSession(sampleSession());
      let block: Record<string, unknown> = { platform: 'DoorbellMotion' };
      const requests = new SettingsRequests({ storagePath: storage.path, readPlatformBlock: async () => block, log });
      expect(await requests.account()).toMatchObject({ state: 'signed-in' });

      block = { ...block, doorbellAccessToken: 'token-SECRET-1234' };

      expect(await requests.account()).toEqual({ state: 'token' });
    } finally {
      await storage.remove();
    }
  });
});

function subscribedAll(answer: StatusAnswer): boolean {
  return 'doorbells' in answer && answer.doorbells.every(({ subscribed }) => subscribed);
}
