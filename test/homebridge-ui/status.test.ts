/**
 * The settings page's `/status` against a running platform on the same storage, as the Homebridge UI's
 * plugin server reads what the plugin in the Homebridge process writes: running only while that
 * process lives and keeps writing. And `/account` for a set-up with a doorbell access token alone.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dataFolderPath, openDataFolder } from '../../src/session/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { STALE_AFTER_MS, STATUS_TIMING, type DeliveryStatus } from '../../src/status/delivery-status.js';
import { sampleSession } from '../session/fixtures/sample-session.js';
import { DOORBELLS, temporaryStorage, waitFor } from '../support/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from '../support/platform-testbed.js';
import { pollUntil } from '../support/poll.js';
import { FAST_RETRY } from './settings-page.js';
import { SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import { createTestLogger } from '../support/homebridge-api.js';
import type { StatusAnswer } from '../../homebridge-ui/settings-requests.js';

const [FRONT, BACK] = DOORBELLS.map(({ deviceId }) => deviceId);

/** A pid no process has: one that just exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid as number;
}

describe('the settings page: the running plugin\'s status', () => {
  const bed = usePlatformTestbed();

  function settingsRequests(block: Record<string, unknown> = {}): SettingsRequests {
    return new SettingsRequests({ storagePath: bed.storagePath, readPlatformBlock: async () => block, log: createTestLogger('UI'), retry: FAST_RETRY });
  }

  const writeStatus = (status: DeliveryStatus | string) =>
    writeFile(join(dataFolderPath(bed.storagePath), 'status.json'), typeof status === 'string' ? status : JSON.stringify(status), { mode: 0o600 });

  it('answers not running before the plugin ever wrote a status', async () => {
    expect(await settingsRequests().status()).toEqual({ running: false });
  });

  it('answers what the running plugin wrote, running, then the motion it delivered', async () => {
    const platform = bed.launch();
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

    await bed.sim.deliverMotion(BACK);
    const moved = await pollUntil(() => requests.status(), (answer) => 'doorbells' in answer && answer.doorbells[1]?.lastMotionAt !== null, 5_000, 'the motion');
    expect(JSON.stringify(moved)).not.toContain(bed.sim.issuedTokens[0] as string);
  });

  it('answers not running for a status whose process is gone, or that nobody rewrote for twice the longest wait between writes', async () => {
    const platform = bed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const requests = settingsRequests();
    const written = await pollUntil(() => requests.status(), (answer) => answer.running && subscribedAll(answer), 5_000, 'a running, subscribed status');
    await bed.stop(platform);
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
