/**
 * status.json as the running platform writes it for the settings page: what it holds in relay and
 * direct mode, per doorbell faults in words, the times of the last motion and ring, never a secret,
 * and never on the way from a push to HomeKit: an alert reaches HomeKit while the file cannot be written.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { dataFolderPath } from '../src/storage/data-folder.js';
import { SessionStore } from '../src/session/session-store.js';
import { openDataFolder } from '../src/storage/data-folder.js';
import { isDeliveryStatus, type DeliveryStatus } from '../src/status/delivery-status.js';
import { FullDisk } from '../scripts/soak/cloud.js';
import { createTestLogger } from '../scripts/lib/homebridge-api.js';
import { ACCOUNT, DOORBELLS, FAST, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import { allConfirmed, STATUS_WRITTEN_MS, usePlatformTestbed, useLoopbackRelay } from './support/platform-testbed.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);

describe('status.json', () => {
  /** BACK is above 2^53; 7654321 is configured but unknown to the service. */
  const testbed = usePlatformTestbed([FRONT, BACK]);
  const relay = useLoopbackRelay();

  /** status.json, whole and of the right shape at every read. */
  async function readStatus(): Promise<DeliveryStatus | undefined> {
    const status = await testbed.readStatus();
    if (status !== undefined) {
      expect(isDeliveryStatus(status)).toBe(true);
    }
    return status;
  }

  const statusWhere = (what: string, holds: (status: DeliveryStatus) => boolean) => testbed.statusWhere(what, holds, readStatus);

  it('holds the relay, the registration, the session and each doorbell, the last motion and ring included, and no secret', async () => {
    const launchedAt = Date.now();
    const platform = testbed.launch({ relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    // The list read after the first pass tells whether the service reaches each doorbell.
    const confirmed = await statusWhere('every doorbell subscribed', ({ doorbells }) => doorbells.every(({ subscribed, online }) => subscribed && online === true));
    expect(confirmed).toEqual({
      pid: process.pid,
      startedAt: expect.any(String),
      updatedAt: expect.any(String),
      pushMode: 'relay',
      relay: { connected: true, since: expect.any(String) },
      registeredAt: expect.any(String),
      nextRefreshAt: expect.any(String),
      session: 'signed-in',
      // The session's own time of sign-in, as session.json holds it: how the settings page tells it is the one it signed in.
      signedInAt: (await new SessionStore(openDataFolder(testbed.storagePath, createTestLogger('UI')), createTestLogger('UI')).readSession())?.loggedInAt,
      doorbells: [
        { deviceId: FRONT, name: 'Front Door', subscribed: true, fault: null, lastMotionAt: null, lastRingAt: null, motionAlertsOffUntil: null, chimeOffUntil: null, battery: null, online: true, offlineSince: null },
        { deviceId: BACK, name: 'Back Door', subscribed: true, fault: null, lastMotionAt: null, lastRingAt: null, motionAlertsOffUntil: null, chimeOffUntil: null, battery: null, online: true, offlineSince: null },
      ],
      dropped: { invalid: 0, duplicate: 0, unconfigured: 0, stale: 0, flood: 0 },
      alerts: { flowing: true, since: expect.any(String), reason: null },
      outages: [],
    });
    const at = (text: string | null) => Date.parse(text ?? '');
    expect(at(confirmed.startedAt)).toBeGreaterThanOrEqual(launchedAt - 1);
    expect(at(confirmed.relay?.since ?? null)).toBeLessThanOrEqual(at(confirmed.registeredAt));
    expect(at(confirmed.nextRefreshAt) - at(confirmed.registeredAt)).toBeGreaterThanOrEqual(FAST.schedule.refreshMs - 1_000);
    expect(at(confirmed.nextRefreshAt) - at(confirmed.registeredAt)).toBeLessThanOrEqual(FAST.schedule.refreshMs + 1_000);
    expect((await stat(testbed.statusPath)).mode & 0o777).toBe(0o600);

    const beforeAlerts = Date.now();
    expect((await testbed.sim.deliverMotion(BACK)).status).toBe(200);
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding' })).status).toBe(200);
    const alerted = await statusWhere('the motion and the ring', ({ doorbells }) => doorbells[1]?.lastMotionAt !== null && doorbells[0]?.lastRingAt !== null);
    expect(at(alerted.doorbells[1]?.lastMotionAt ?? null)).toBeGreaterThanOrEqual(beforeAlerts - 1);
    expect(at(alerted.doorbells[0]?.lastRingAt ?? null)).toBeGreaterThanOrEqual(beforeAlerts - 1);
    expect([alerted.doorbells[0]?.lastMotionAt, alerted.doorbells[1]?.lastRingAt]).toEqual([null, null]);

    const text = await readFile(testbed.statusPath, 'utf8');
    const { receiverSecret, relayTopic } = JSON.parse(await readFile(join(dataFolderPath(testbed.storagePath), 'push.json'), 'utf8')) as Record<string, string>;
    for (const secret of [...testbed.sim.secrets, receiverSecret, relayTopic, ACCOUNT.email, ACCOUNT.code, 'Bearer']) {
      expect(text).not.toContain(secret);
    }
  });

  it('says in direct mode that the receiver listens, and why a doorbell the service does not know has no alerts', async () => {
    const doorbells = [...DOORBELLS, { deviceId: '7654321', name: 'Side Gate' }];
    const platform = testbed.launch({ doorbells });
    await waitFor(() => allConfirmed(platform), 'the known doorbells');

    const status = await statusWhere('the unknown doorbell refused', (current) => current.doorbells[2]?.fault !== 'not subscribed yet');
    expect(status).toMatchObject({ pushMode: 'direct', receiver: { listening: true }, session: 'signed-in' });
    expect(status.relay).toBeUndefined();
    expect(status.doorbells.map(({ subscribed, fault }) => [subscribed, fault])).toEqual([
      [true, null],
      [true, null],
      [false, 'the doorbell service does not know this device id'],
    ]);
  });

  it('delivers an alert to HomeKit at once while status.json cannot be written, and records it once it can', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    await statusWhere('every doorbell subscribed', ({ doorbells }) => doorbells.every(({ subscribed }) => subscribed));
    // Another process holds the data folder's lock, as the settings page does while it writes.
    const release = await lockfile.lock(dataFolderPath(testbed.storagePath), { lockfilePath: join(dataFolderPath(testbed.storagePath), '.lock'), realpath: false });
    try {
      // Awaited, not timed: the lock stays held until the end of this block, so an alert that waited
      // for its write would not show here at all, however fast the machine.
      expect((await testbed.sim.deliverMotion(FRONT)).status).toBe(202);
      await waitFor(() => sensorValue(platform.test, FRONT, 'MotionDetected') === true, 'the motion in HomeKit');
      // A write planned for the motion is waiting for the lock: the file still shows none.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await readStatus())?.doorbells[0]?.lastMotionAt).toBeNull();
    } finally {
      await release();
    }
    await statusWhere('the motion once the lock is free', ({ doorbells }) => doorbells[0]?.lastMotionAt !== null);
  });

  it('writes through the sink its timing names: a full disk refuses each write with one warning, alerts reach HomeKit, the file follows once there is room', async () => {
    const disk = new FullDisk();
    disk.full = true;
    const platform = testbed.launch({ timing: { ...FAST, statusSink: disk.wrap } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    expect((await testbed.sim.deliverMotion(FRONT)).status).toBe(202);
    await waitFor(() => sensorValue(platform.test, FRONT, 'MotionDetected') === true, 'the motion in HomeKit');
    await waitFor(() => disk.refused >= 2, 'writes refused', STATUS_WRITTEN_MS);

    expect(await readStatus()).toBeUndefined();
    expect(platform.log.lines.filter(({ level, message }) => level === 'warn' && message.includes('ENOSPC'))).toHaveLength(1);
    disk.full = false;
    expect((await testbed.sim.deliverMotion(BACK)).status).toBe(202);
    await statusWhere('both motions once there is room', ({ doorbells }) => doorbells.every(({ lastMotionAt }) => lastMotionAt !== null));
  });

  it('says when the settings page signed out: no session, and every doorbell faulted in words', async () => {
    const platform = testbed.launch({ relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    const log = createTestLogger('UI');
    await new SessionStore(openDataFolder(testbed.storagePath, log), log).removeSession();

    const status = await statusWhere('the sign-out', ({ session }) => session === 'signed-out');
    expect(status.signedInAt).toBeNull();
    expect(status.registeredAt).toBeNull();
    expect(status.nextRefreshAt).toBeNull();
    expect(status.doorbells.map(({ subscribed, fault }) => [subscribed, fault])).toEqual([
      [false, 'not signed in'],
      [false, 'not signed in'],
    ]);
  });
});
