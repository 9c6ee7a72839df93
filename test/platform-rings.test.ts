/**
 * Rings as the household hears them, and what the plugin did not act on: a doorbell presses in HomeKit
 * and over Matter at most once every 5 s, so a flood of forged rings through the real receiver rings
 * once; a repeated event id is a duplicate, never a flood; and status.json counts every notification
 * not acted on, by cause, in direct and relay mode.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import type { PlatformTiming } from '../src/platform.js';
import type { DroppedCounts } from '../src/status/delivery-status.js';
import { FakeMatter } from './support/fake-matter.js';
import { recordPresses } from './support/hap-changes.js';
import { hap } from '../scripts/lib/hap.js';
import { accessoryOf, delay, DOORBELLS, FAST, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed, useLoopbackRelay } from './support/platform-testbed.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);
const SINGLE_PRESS = hap.Characteristic.ProgrammableSwitchEvent.SINGLE_PRESS;
const NOTHING_DROPPED: DroppedCounts = { invalid: 0, duplicate: 0, unconfigured: 0, stale: 0, flood: 0 };

/** status.json written within a fraction of a second, so that counts told without a write show soon. */
const QUICK_STATUS: PlatformTiming = { ...FAST, status: { minIntervalMs: 50, maxIntervalMs: 200 } };

const testbed = usePlatformTestbed();

/** Waits, bounded, until status.json counts exactly `expected`, and returns the counts it holds then. */
async function droppedCounts(expected: Partial<DroppedCounts>): Promise<DroppedCounts | undefined> {
  const wanted = JSON.stringify({ ...NOTHING_DROPPED, ...expected });
  const status = await testbed.statusWhere(`dropped ${wanted}`, ({ dropped }) => JSON.stringify(dropped) === wanted).catch(() => testbed.readStatus());
  return status?.dropped;
}

/** A ding for `deviceId` POSTed to the registered push address, as anyone who learnt it can; the receiver's status. */
async function forgeRing(deviceId: string, id: string): Promise<number> {
  return (await testbed.sim.deliverMotion(deviceId, { kind: 'ding', id })).status;
}

const rangLines = (platform: RunningPlatform, name: string) => platform.log.lines.filter(({ message }) => message === `Doorbell rang at ${name}`);
const floodLines = (platform: RunningPlatform, name: string) =>
  platform.log.lines.filter(({ message }) => message === `Ignored a ring at ${name}: it pressed less than 5 s ago`);

/** A press shows over Matter once Homebridge has the device and the plugin has read it back. */
async function matterDevicesReady(matter: FakeMatter): Promise<void> {
  const devicesAnswered = () => [...matter.registered.keys()].every((uuid) => matter.calls.some((call) => call.uuid === uuid && call.answered === true));
  await waitFor(() => matter.registered.size > 0 && devicesAnswered(), 'the Matter devices');
}

describe('rings, at most one press every 5 s per doorbell', () => {
  it('50 forged rings in a second through the receiver press once, in HomeKit and over Matter, and count 49 floods', async () => {
    const matter = new FakeMatter();
    try {
      // The rings' clock stands still: all 50 come within the 5 s however slow the machine is.
      const platform = testbed.launch({ timing: { ...QUICK_STATUS, monotonicNow: () => 1_000 }, prepare: (api) => matter.install(api) });
      await waitFor(() => allConfirmed(platform), 'subscriptions');
      await matterDevicesReady(matter);
      const presses = recordPresses(accessoryOf(platform, FRONT));

      const statuses: number[] = [];
      for (let ring = 0; ring < 50; ring += 1) {
        statuses.push(await forgeRing(FRONT, `forged-${ring}`));
      }

      expect(statuses).toEqual(Array.from({ length: 50 }, () => 202));
      expect(presses).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS] });
      await waitFor(() => matter.switchEvents.length >= 2, 'the press over Matter');
      await delay(100);
      expect(matter.switchEvents.map((event) => event.split(' ')[1])).toEqual(['press', 'release']);
      expect(rangLines(platform, 'Front Door')).toHaveLength(1);
      const floods = floodLines(platform, 'Front Door');
      expect(floods).toHaveLength(49);
      expect(new Set(floods.map(({ level }) => level))).toEqual(new Set(['debug']));
      expect(await droppedCounts({ flood: 49 })).toEqual({ ...NOTHING_DROPPED, flood: 49 });
    } finally {
      matter.dispose();
    }
  });

  it('counts a repeated id as a duplicate, never a flood, and presses again 5 s after the last press, by the monotonic clock', async () => {
    let monotonic = 1_000;
    // The wall clock plays no part: Date.now moves on as it likes, the rings' clock only as told.
    const platform = testbed.launch({ timing: { ...QUICK_STATUS, monotonicNow: () => monotonic } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const front = recordPresses(accessoryOf(platform, FRONT));
    const back = recordPresses(accessoryOf(platform, BACK));

    expect(await forgeRing(FRONT, 'ring-1')).toBe(202);
    expect(await forgeRing(FRONT, 'ring-1')).toBe(202);
    monotonic += 4_999;
    expect(await forgeRing(FRONT, 'ring-2')).toBe(202);
    // Each doorbell has its own 5 s.
    expect(await forgeRing(BACK, 'ring-1')).toBe(202);
    monotonic += 1;
    expect(await forgeRing(FRONT, 'ring-3')).toBe(202);
    expect(await forgeRing(FRONT, 'ring-1')).toBe(202);

    expect(front).toEqual({ doorbell: [SINGLE_PRESS, SINGLE_PRESS], switch: [SINGLE_PRESS, SINGLE_PRESS] });
    expect(back).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS] });
    expect(rangLines(platform, 'Front Door')).toHaveLength(2);
    expect(await droppedCounts({ duplicate: 2, flood: 1 })).toEqual({ ...NOTHING_DROPPED, duplicate: 2, flood: 1 });
  });

  it('with the Chime switch off still presses the switch at most once every 5 s', async () => {
    const doorbells = [{ ...DOORBELLS[0], chimeSwitch: true }, DOORBELLS[1]];
    const platform = testbed.launch({ timing: QUICK_STATUS, overrides: { doorbells } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const accessory = accessoryOf(platform, FRONT);
    accessory.getServiceById(hap.Service.Switch, 'chime')?.setCharacteristic(hap.Characteristic.On, false);
    const presses = recordPresses(accessory);

    for (const id of ['a', 'b', 'c']) {
      expect(await forgeRing(FRONT, id)).toBe(202);
    }

    expect(presses).toEqual({ doorbell: [], switch: [SINGLE_PRESS] });
    expect(await droppedCounts({ flood: 2 })).toEqual({ ...NOTHING_DROPPED, flood: 2 });
  });
});

describe("rings through the relay, 5 s apart by the relay's own clock", () => {
  /** When the test began by the relay's clock: a whole second, so that each ring's relay second is exact. */
  let start = 0;
  /** The relay's clock, which stamps each message's `time` as it receives it. */
  let relayMs = 0;
  /** The clock rings are accepted by: it stands still unless a test moves it, so every ring arrives at once. */
  let monotonic = 1_000;
  const relay = useLoopbackRelay({ now: () => relayMs });
  const timing: PlatformTiming = { ...QUICK_STATUS, monotonicNow: () => monotonic };

  beforeEach(() => {
    start = Math.floor(Date.now() / 1000) * 1000;
    relayMs = start;
    monotonic = 1_000;
  });

  const topicOf = () => new URL(testbed.sim.pushToken ?? 'http://x/').pathname.slice(1);

  /** The home's stream breaks and cannot reopen; the relay still takes and caches what is published. */
  async function cutOffHome(platform: RunningPlatform): Promise<void> {
    relay().refuseSubscriptions({ status: 503, times: 1_000 });
    relay().dropStreams();
    await waitFor(() => DOORBELLS.every(({ deviceId }) => sensorValue(platform.test, deviceId, 'StatusFault') === 1), 'the faults of the break');
  }

  /** The home's stream reopens and asks for what the relay cached meanwhile. */
  function reconnectHome(): void {
    relay().refuseSubscriptions({ status: 503, times: 0 });
  }

  /** A ding published to the home's topic, as the doorbell service does, when the relay's clock says `relaySecondsLater` after the start. */
  async function ringAt(relaySecondsLater: number, id: string): Promise<void> {
    relayMs = start + relaySecondsLater * 1000;
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding', id })).status).toBe(200);
  }

  it('two visitors 10 s apart, caught up together after the home reconnects, both press, in HomeKit and over Matter', async () => {
    const matter = new FakeMatter();
    try {
      const platform = testbed.launch({ timing, relayUrl: relay().url, prepare: (api) => matter.install(api) });
      await waitFor(() => allConfirmed(platform), 'subscriptions');
      await matterDevicesReady(matter);
      const presses = recordPresses(accessoryOf(platform, FRONT));

      await cutOffHome(platform);
      await ringAt(0, 'visitor-1');
      await ringAt(10, 'visitor-2');
      expect(relay().messages(topicOf()).map((message) => message.time - start / 1000)).toEqual([0, 10]);
      reconnectHome();

      await waitFor(() => rangLines(platform, 'Front Door').length + floodLines(platform, 'Front Door').length === 2, 'both rings handled');
      expect(presses).toEqual({ doorbell: [SINGLE_PRESS, SINGLE_PRESS], switch: [SINGLE_PRESS, SINGLE_PRESS] });
      expect(rangLines(platform, 'Front Door')).toHaveLength(2);
      await waitFor(() => matter.switchEvents.length >= 4, 'both presses over Matter');
      expect(matter.switchEvents.map((event) => event.split(' ')[1])).toEqual(['press', 'release', 'press', 'release']);
      expect(await droppedCounts({})).toEqual(NOTHING_DROPPED);
    } finally {
      matter.dispose();
    }
  });

  it('a flood caught up together presses once per 5 relay seconds; a ring stamped before the last press, by a relay clock set back, is judged by arrival', async () => {
    const platform = testbed.launch({ timing, relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const presses = recordPresses(accessoryOf(platform, FRONT));

    await cutOffHome(platform);
    // Ten forged rings in each of three relay seconds: only the first of the first and of the last press.
    for (const second of [0, 3, 5]) {
      for (let ring = 0; ring < 10; ring += 1) {
        await ringAt(second, `forged-${second}-${ring}`);
      }
    }
    reconnectHome();
    await waitFor(() => rangLines(platform, 'Front Door').length + floodLines(platform, 'Front Door').length === 30, 'the flood handled');
    expect(presses.doorbell).toEqual([SINGLE_PRESS, SINGLE_PRESS]);

    // The relay's clock steps back 30 s, before the last press's time: the time of arrival decides.
    await ringAt(-25, 'stepped-back-1');
    await waitFor(() => floodLines(platform, 'Front Door').length === 29, 'the ring arriving with the last press');
    monotonic += 5_000;
    await ringAt(-25, 'stepped-back-2');
    await waitFor(() => rangLines(platform, 'Front Door').length === 3, 'the ring arriving 5 s after the last press');

    expect(presses).toEqual({ doorbell: [SINGLE_PRESS, SINGLE_PRESS, SINGLE_PRESS], switch: [SINGLE_PRESS, SINGLE_PRESS, SINGLE_PRESS] });
    expect(await droppedCounts({ flood: 29 })).toEqual({ ...NOTHING_DROPPED, flood: 29 });
  });
});

describe('status.json counts what was not acted on, by cause', () => {
  it('in direct mode: a body that is not a notification (400), a duplicate, a doorbell not configured, a flood; not a wrong path or type', async () => {
    const platform = testbed.launch({ timing: QUICK_STATUS });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const pushToken = testbed.sim.pushToken ?? '';
    const post = async (url: string, body: string, type = 'application/json') => {
      const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });
      await response.arrayBuffer();
      return response.status;
    };

    expect(await post(pushToken, '{"not":"a notification"}')).toBe(400);
    expect(await post(pushToken, 'not json')).toBe(400);
    // Refused before the body is read as a notification: scanners and strays, not notifications.
    expect(await post(`${new URL(pushToken).origin}/push/wrong`, '{}')).toBe(404);
    expect(await post(pushToken, '{}', 'text/plain')).toBe(415);
    expect(await post(pushToken, JSON.stringify({ device_id: FRONT, kind: 'motion', id: 'm-1' }))).toBe(202);
    expect(await post(pushToken, JSON.stringify({ device_id: FRONT, kind: 'motion', id: 'm-1' }))).toBe(202);
    expect(await post(pushToken, JSON.stringify({ device_id: '7654321', kind: 'motion' }))).toBe(202);
    expect(await forgeRing(BACK, 'r-1')).toBe(202);
    expect(await forgeRing(BACK, 'r-2')).toBe(202);

    expect(await droppedCounts({ invalid: 2, duplicate: 1, unconfigured: 1, flood: 1 })).toEqual({ invalid: 2, duplicate: 1, unconfigured: 1, stale: 0, flood: 1 });
  });

  describe('in relay mode', () => {
    const relay = useLoopbackRelay();

    it('a message that is not a notification, a duplicate, a doorbell not configured, a stale message, a flood; not a line that is no relay event', async () => {
      const platform = testbed.launch({ timing: QUICK_STATUS, relayUrl: relay().url });
      await waitFor(() => allConfirmed(platform), 'subscriptions');
      const topic = new URL(testbed.sim.pushToken ?? 'http://x/').pathname.slice(1);
      const relayNow = Math.floor(Date.now() / 1000);

      await testbed.sim.deliverMotion(FRONT, { rawBody: 'not json' });
      await testbed.sim.deliverMotion(FRONT, { id: 'm-1' });
      await testbed.sim.deliverMotion(FRONT, { id: 'm-1' });
      await testbed.sim.deliverMotion(BACK, { rawBody: '{"device_id":7654321,"kind":"motion"}' });
      relay().injectLine(topic, JSON.stringify({ id: 'old', time: relayNow - 600, event: 'message', topic, message: `{"device_id":${FRONT},"kind":"motion"}` }));
      relay().injectLine(topic, '<html>not a relay event</html>');
      await testbed.sim.deliverMotion(BACK, { kind: 'ding', id: 'r-1' });
      await testbed.sim.deliverMotion(BACK, { kind: 'ding', id: 'r-2' });

      expect(await droppedCounts({ invalid: 1, duplicate: 1, unconfigured: 1, stale: 1, flood: 1 })).toEqual({ invalid: 1, duplicate: 1, unconfigured: 1, stale: 1, flood: 1 });
      expect(rangLines(platform, 'Back Door')).toHaveLength(1);
    });
  });
});
