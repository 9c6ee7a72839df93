/**
 * The doorbell as HomeKit sees it, through the whole platform on real HAP objects: a ring is a press
 * of its button, the service's own payload is understood, each doorbell's fault clears as soon as its
 * own subscription succeeds, and a config that cannot be used leaves no stale state behind.
 */
import { describe, expect, it } from '@jest/globals';
import { MIN_RING_INTERVAL_MS } from '../src/accessories/doorbell-accessory.js';
import { recordPresses } from './support/hap-changes.js';
import { hap } from '../scripts/lib/hap.js';
import { accessoryOf, DOORBELLS, FAST, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from './support/platform-testbed.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);
const { Characteristic, Service } = hap;
const SINGLE_PRESS = Characteristic.ProgrammableSwitchEvent.SINGLE_PRESS;

describe('the doorbell button', () => {
  const testbed = usePlatformTestbed();

  it('turns a ding into SINGLE_PRESS on the Doorbell and the switch, once per event id, motion untouched', async () => {
    // The rings' clock, moved on past the 5 s between two presses of a doorbell.
    let monotonic = 0;
    const platform = testbed.launch({ timing: { ...FAST, monotonicNow: () => monotonic } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const presses = recordPresses(accessoryOf(platform, FRONT));

    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding', id: 'ring-1' })).status).toBe(202);
    monotonic += MIN_RING_INTERVAL_MS;
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding', id: 'ring-1' })).status).toBe(202);
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding', id: 'ring-2' })).status).toBe(202);

    expect(presses).toEqual({ doorbell: [SINGLE_PRESS, SINGLE_PRESS], switch: [SINGLE_PRESS, SINGLE_PRESS] });
    expect(sensorValue(platform.test, FRONT, 'MotionDetected')).toBe(false);
    expect(platform.log.lines.filter(({ message }) => message === 'Doorbell rang at Front Door')).toHaveLength(2);
  });

  it('with button false has no button services, and ignores a ding at debug level', async () => {
    const platform = testbed.launch({ overrides: { doorbells: [{ deviceId: FRONT, name: 'Front Door', button: false }, DOORBELLS[1]] } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    const accessory = accessoryOf(platform, FRONT);
    expect(accessory.getService(Service.Doorbell)).toBeUndefined();
    expect(accessory.getService(Service.StatelessProgrammableSwitch)).toBeUndefined();
    expect(accessoryOf(platform, BACK).getService(Service.Doorbell)).toBeDefined();
    expect((await testbed.sim.deliverMotion(FRONT, { kind: 'ding' })).status).toBe(202);
    expect(platform.log.lines).toContainEqual({ level: 'debug', message: 'Ignored a "ding" notification at Front Door' });
  });

  it("reads the service's own payload: a person detection is a motion, a ring category a press", async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const presses = recordPresses(accessoryOf(platform, BACK));
    const payload = (category: string, id: string) =>
      `{"android_config":{"category":"com.ring.pn.live-event.${category}"},"data":{"device":{"id":${BACK}},"event":{"ding":{"id":"${id}","subtype":"human"}}}}`;

    expect((await testbed.sim.deliverMotion(BACK, { rawBody: payload('motion', '6975233002112450000') })).status).toBe(202);
    expect((await testbed.sim.deliverMotion(BACK, { rawBody: payload('ding', '6975233002112450001') })).status).toBe(202);

    expect(sensorValue(platform.test, BACK, 'MotionDetected')).toBe(true);
    expect(presses).toEqual({ doorbell: [SINGLE_PRESS], switch: [SINGLE_PRESS] });
  });
});

describe('faults, doorbell by doorbell', () => {
  const FIVE = ['1001', '1002', '1003', '1004', '1005'].map((deviceId, index) => ({ deviceId, name: `Door ${index + 1}` }));
  const testbed = usePlatformTestbed(FIVE.map(({ deviceId }) => deviceId));

  it('clears each doorbell\'s fault as soon as its own subscription succeeds, while one keeps failing', async () => {
    // The failing doorbell's own retries take 4 x 400 ms within the call, as 503s do: waited for real.
    testbed.sim.injectFault('subscribe', { status: 503, deviceId: '1003', times: 1_000 });
    const timing = { ...FAST, retry: { backoff: { firstMs: 400, factor: 2, maxMs: 400, jitter: false } } };
    const platform = testbed.launch({ doorbells: FIVE, timing });
    const healthy = FIVE.filter(({ deviceId }) => deviceId !== '1003');

    // Awaited, not timed: while the fifth is still retrying (its five attempts take 1.6 s at the least).
    await waitFor(() => allConfirmed(platform, healthy), 'the four healthy doorbells');
    expect(sensorValue(platform.test, '1003', 'StatusFault')).toBe(1);
    expect(testbed.sim.requestsTo('subscribe').filter(({ path }) => path.includes('/1003/')).length).toBeLessThan(5);

    await waitFor(() => logged(platform, '4 of 5 doorbells subscribed to motion alerts; still trying: Door 3'), 'the summary', 5_000);
    testbed.sim.clearFaults();
    await waitFor(() => allConfirmed(platform, FIVE), 'the fifth after its retry', 5_000);
  });
});

describe('no stale state', () => {
  const testbed = usePlatformTestbed();

  async function accessoriesWithMotion(): Promise<RunningPlatform> {
    const first = testbed.launch({ overrides: { motionTimeout: 600 } });
    await testbed.untilLaunchDone(first);
    await testbed.sim.deliverMotion(FRONT);
    await testbed.sim.deliverMotion(BACK);
    expect(DOORBELLS.map(({ deviceId }) => sensorValue(first.test, deviceId, 'MotionDetected'))).toEqual([true, true]);
    await testbed.stop(first);
    return first;
  }

  it.each([
    ['a config mistake', { doorbellServerUrl: 'not a url' }],
    ['an unconfigured block', undefined],
  ])('shows no motion and a fault on every cached accessory after a restart with %s, sending nothing', async (_, overrides) => {
    const first = await accessoriesWithMotion();
    testbed.sim.reset();

    const second =
      overrides === undefined
        ? testbed.launch({ block: { platform: 'DoorbellMotion' }, cached: first.test.registered })
        : testbed.launch({ overrides, cached: first.test.registered });

    expect(DOORBELLS.map(({ deviceId }) => sensorValue(second.test, deviceId, 'MotionDetected'))).toEqual([false, false]);
    expect(DOORBELLS.map(({ deviceId }) => sensorValue(second.test, deviceId, 'StatusFault'))).toEqual([1, 1]);
    // The Doorbell Alerts sensor stays too: it opens after a minute, a config mistake being an outage.
    expect(second.test.registered.size).toBe(3);
    expect(testbed.sim.requests).toEqual([]);
  });
});

/**
 * Text a stranger chose reaches the log cut and escaped: a notification's kind of 10 KB, with
 * newlines and terminal escapes, sent through the real receiver, gives one short debug line whether
 * its doorbell is configured or not.
 */
describe('text a stranger chose', () => {
  /** A forged line, a screen-clearing escape, a colour, then 10 KB more, a carriage return and a C1 escape. */
  const HOSTILE_KIND = `ding\nMotion at Front Door\u001b[2J\u001b[31m${'x'.repeat(10_000)}\r\u009b`;
  /** Its first 64 characters, escaped as JSON and quoted, with an ellipsis for the rest. */
  const QUOTED_KIND = `"ding\\nMotion at Front Door\\u001b[2J\\u001b[31m${'x'.repeat(30)}…"`;

  const testbed = usePlatformTestbed();

  it('logs a hostile kind as one short line, cut and escaped, at a configured doorbell and an unknown one', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const unknownDoorbell = JSON.stringify({ device_id: 4242, kind: HOSTILE_KIND });

    expect((await testbed.sim.deliverMotion(FRONT, { kind: HOSTILE_KIND })).status).toBe(202);
    expect((await testbed.sim.deliverMotion(FRONT, { rawBody: unknownDoorbell })).status).toBe(202);

    const ignored = platform.log.lines.filter(({ message }) => message.startsWith('Ignored a'));
    expect(ignored).toEqual([
      { level: 'debug', message: `Ignored a ${QUOTED_KIND} notification at Front Door` },
      { level: 'debug', message: `Ignored a ${QUOTED_KIND} notification for doorbell 4242: not configured` },
    ]);
    const raw = ['\n', '\r', '\u001b', '\u009b', 'x'.repeat(31)];
    const unsafe = platform.log.lines.filter(({ message }) => raw.some((text) => message.includes(text)));
    expect(unsafe).toEqual([]);
  });
});
