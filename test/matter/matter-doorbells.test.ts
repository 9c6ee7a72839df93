/**
 * The doorbells' Matter devices against a stand-in for Homebridge's `api.matter` (test/support/fake-matter.ts),
 * for what a real Homebridge does too rarely or too slowly to test end to end: a registration that takes
 * long or stops part way, a removed doorbell, a plugin stopping while it waits, an alert's timing.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { MatterAccessory } from 'homebridge';
import type { DoorbellSettings } from '../../src/config/parse-config.js';
import { ALERTS_CONTEXT, hasOtherFeatures, matterAccessory } from '../../src/matter/matter-devices.js';
import { MatterDoorbells } from '../../src/matter/matter-doorbells.js';
import { Pauses } from '../../src/matter/registration-wait.js';
import { PLATFORM_NAME, PLUGIN_NAME } from '../../src/settings.js';
import { MATTER_TIMING, type MatterTiming } from '../../src/matter/registration-wait.js';
import { FakeMatter, type FakeMatterOptions } from '../support/fake-matter.js';
import { createTestApi, createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';
import { delay, doorbellSettings } from '../../scripts/lib/platform-harness.js';
import { pollUntil } from '../../scripts/lib/poll.js';

/** Each with every device a doorbell can have over Matter: five. */
function doorbells(count: number): DoorbellSettings[] {
  return Array.from({ length: count }, (_, index) =>
    doorbellSettings({ deviceId: String(1000 + index), name: `Door ${index + 1}`, motionTimeout: 60, detections: ['person', 'vehicle', 'other'] }),
  );
}

/** No warning before a registration is this slow, unless a test says otherwise. */
const PATIENT: MatterTiming = { firstCheckMs: 10, longestCheckMs: 200, slowAfterMs: 30_000 };

interface Running {
  matter: FakeMatter;
  devices: MatterDoorbells;
  log: TestLogger;
  api: ReturnType<typeof createTestApi>['api'];
}

let running: Running | undefined;

afterEach(() => {
  running?.devices.dispose();
  running?.matter.dispose();
  running = undefined;
});

function start(options: FakeMatterOptions, timing = PATIENT): Running {
  const { api } = createTestApi({ storagePath: '/nonexistent' });
  const matter = new FakeMatter(options);
  matter.install(api);
  const log = createTestLogger();
  const devices = new MatterDoorbells(api, api.matter!, log, timing);
  running = { matter, devices, log, api };
  return running;
}

/** The devices Homebridge has registered that show the plugin's state (unreachable: no subscription yet). */
function shownCount({ matter }: Running): number {
  return [...matter.registered.values()].filter(({ clusters }) => clusters.bridgedDeviceBasicInformation.reachable === false).length;
}

/** Until Homebridge has registered all `count` devices and each shows the plugin's state. */
async function allShown(run: Running, count: number, timeoutMs = 5_000): Promise<void> {
  await pollUntil(
    () => shownCount(run),
    (shown) => shown === count,
    timeoutMs,
    `${count} devices registered and shown`,
    10,
  );
}

function linesAt(log: TestLogger, level: string): string[] {
  return log.lines.filter((line) => line.level === level).map(({ message }) => message);
}

/**
 * On a fake clock: which warning comes, and how often Homebridge is asked, depend on how long each
 * step took, which on a real clock is the machine's speed.
 */
describe('waiting for Homebridge to register the devices', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('asks about one device at a time, the first not registered yet, less and less often: no flood of reads', async () => {
    // 25 devices; Homebridge takes a second before the first, as a bridge busy starting does.
    const run = start({ firstAfterMs: 1_000, eachAfterMs: 5 });
    run.devices.publish(doorbells(5), { complete: true });
    await jest.advanceTimersByTimeAsync(2_000);
    expect(shownCount(run)).toBe(25);

    const firstUuid = run.matter.calls.find(({ method }) => method === 'getAccessoryState')?.uuid;
    const beforeFirst = run.matter.calls.slice(0, run.matter.calls.findIndex(({ answered }) => answered === true));
    expect(new Set(beforeFirst.filter(({ method }) => method === 'getAccessoryState').map(({ uuid }) => uuid))).toEqual(new Set([firstUuid]));
    // Backing off from 10 ms, a second's wait takes a handful of reads; then about one per device.
    expect(run.matter.unansweredReads).toBeLessThanOrEqual(25 + 15);
    expect(linesAt(run.log, 'warn')).toEqual([]);
  });

  it('warns once when Homebridge stops part way, as at its device limit, and still shows the rest once it goes on', async () => {
    const run = start({ limit: 3 }, MATTER_TIMING);
    run.devices.publish(doorbells(2), { complete: true });
    await jest.advanceTimersByTimeAsync(MATTER_TIMING.slowAfterMs - 1);
    expect(linesAt(run.log, 'warn')).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);

    expect(linesAt(run.log, 'warn')).toEqual([
      "Matter: Homebridge has registered 3 of the doorbells' 10 Matter devices in 60 s, none for 60 s; Door 1 Vehicle and those after it show nothing over Matter until it does. If Homebridge's log says the bridge has reached its limit of 1000 Matter devices, give some doorbells a child bridge of their own",
    ]);
    await jest.advanceTimersByTimeAsync(5_000);
    run.matter.resume();
    await jest.advanceTimersByTimeAsync(MATTER_TIMING.longestCheckMs);
    expect(shownCount(run)).toBe(10);
    expect(linesAt(run.log, 'info')).toContain('Matter: Homebridge has registered all 10 devices of the doorbells, after 67 s');
    expect(linesAt(run.log, 'warn')).toHaveLength(1);
  });

  it('warns of a slow registration as slow, once, and keeps waiting', async () => {
    // 20 devices, the first at once, then one every 4.5 s: 14 of them in the first minute, the last at 85.5 s.
    const run = start({ eachAfterMs: 4_500 }, MATTER_TIMING);
    run.devices.publish(doorbells(4), { complete: true });
    await jest.advanceTimersByTimeAsync(MATTER_TIMING.slowAfterMs);
    expect(linesAt(run.log, 'warn')).toEqual(["Matter: Homebridge has registered 14 of the doorbells' 20 Matter devices in 60 s, slowly; the others show over Matter as it registers them"]);

    await jest.advanceTimersByTimeAsync(25_500 + MATTER_TIMING.longestCheckMs);
    expect(shownCount(run)).toBe(20);
    expect(linesAt(run.log, 'warn')).toHaveLength(1);
    expect(linesAt(run.log, 'info')).toContain('Matter: Homebridge has registered all 20 devices of the doorbells, after 86 s');
  });
});

describe('after the plugin stopped', () => {
  it('sends Homebridge nothing more: no update, no press, no read', async () => {
    const run = start({});
    run.devices.publish(doorbells(1), { complete: true });
    await allShown(run, 5);
    const callsBefore = run.matter.calls.length;

    run.devices.dispose();
    const doorbell = run.devices.doorbell('1000');
    doorbell?.follow({ type: 'motion', sensor: 'main', detected: true, since: performance.now() });
    doorbell?.follow({ type: 'ring', outcome: 'chimed' });
    doorbell?.follow({ type: 'fault', faulted: false });
    await delay(50);

    expect(doorbell).toBeDefined();
    expect(run.matter.calls.slice(callsBefore)).toEqual([]);
  });
});

describe('a doorbell removed from the config', () => {
  it('has its cached devices unregistered, and only those', async () => {
    const run = start({});
    const [kept, removed] = doorbells(2);
    const cached: MatterAccessory[] = (['motion', 'button', 'person'] as const).map((role) =>
      matterAccessory(run.api, run.api.matter!, { deviceId: removed.deviceId, doorbellName: removed.name, role }),
    );
    cached.forEach((accessory) => run.devices.restore(accessory));
    run.devices.publish([kept], { complete: true });
    await allShown(run, 5);

    expect(run.matter.calls.filter(({ method }) => method === 'unregistered').map(({ uuid }) => uuid)).toEqual(cached.map(({ UUID }) => UUID));
    expect(linesAt(run.log, 'info')).toContain('Removed Door 2, Door 2 Doorbell, Door 2 Person from Matter: no longer configured');
  });

  it('registers the others only once Homebridge has removed them, so that two calls never change its device list at once', async () => {
    // Homebridge 2.4 brought them back from its cache, and removes them after it has answered.
    const run = start({ removeAfterMs: 50 });
    const [kept, removed] = doorbells(2);
    const cached = (['motion', 'button'] as const).map((role) => matterAccessory(run.api, run.api.matter!, { deviceId: removed.deviceId, doorbellName: removed.name, role }));
    await run.api.matter!.registerPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, cached);
    await pollUntil(() => run.matter.registered.size, (size) => size === cached.length, 1_000, 'the cached devices back', 10);
    cached.forEach((accessory) => run.devices.restore(accessory));
    const callsBefore = run.matter.calls.length;

    run.devices.publish([kept], { complete: true });
    await allShown(run, 5);

    const changes = run.matter.calls.slice(callsBefore).filter(({ method }) => method === 'unregistered' || method === 'registerPlatformAccessories');
    expect(changes.map(({ method }) => method)).toEqual(['unregistered', 'unregistered', 'registerPlatformAccessories']);
  });

  it('registers the others all the same when Homebridge has not removed them after 10 s', async () => {
    jest.useFakeTimers();
    try {
      const run = start({ removeAfterMs: Infinity });
      const [kept, removed] = doorbells(2);
      const cached = matterAccessory(run.api, run.api.matter!, { deviceId: removed.deviceId, doorbellName: removed.name, role: 'motion' });
      await run.api.matter!.registerPlatformAccessories(PLUGIN_NAME, PLATFORM_NAME, [cached]);
      await jest.advanceTimersByTimeAsync(0);
      run.devices.restore(cached);

      run.devices.publish([kept], { complete: true });
      await jest.advanceTimersByTimeAsync(9_000);
      expect(run.matter.countOf('registerPlatformAccessories')).toBe(1);
      await jest.advanceTimersByTimeAsync(3_000);

      expect(run.matter.countOf('registerPlatformAccessories')).toBe(2);
      expect(shownCount(run)).toBe(5);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('timing', () => {
  it('times an occupancy from when the motion alert was accepted, not from when it reached Matter', async () => {
    const run = start({});
    run.devices.publish(doorbells(1), { complete: true });
    await allShown(run, 5);

    run.devices.doorbell('1000')?.follow({ type: 'motion', sensor: 'main', detected: true, since: performance.now() - 40 });
    const [line] = await pollUntil(
      () => linesAt(run.log, 'debug').filter((message) => message.startsWith('Matter: Door 1 occupied')),
      (lines) => lines.length > 0,
      1_000,
      'the occupancy confirmed',
      10,
    );
    expect(Number(/, ([\d.]+) ms after the motion alert was accepted$/.exec(line)?.[1])).toBeGreaterThanOrEqual(40);
  });
});

describe('the Doorbell Alerts contact sensor', () => {
  const stateOf = ({ matter, api }: Running) => matter.registered.get(api.hap.uuid.generate('doorbell-motion:matter:alerts'));

  it('is a contact sensor of its own, named Doorbell Alerts, always reachable, closed (stateValue true) while alerts flow and open while they do not', async () => {
    const run = start({});
    run.devices.publish(doorbells(1), { complete: true, alerts: true });
    await pollUntil(() => stateOf(run)?.clusters.booleanState, (state) => state !== undefined, 5_000, 'the alerts sensor registered', 10);
    const device = stateOf(run);

    expect(device?.definition).toMatchObject({ displayName: 'Doorbell Alerts', serialNumber: 'alerts', manufacturer: 'Doorbell Motion', model: 'Alerts' });
    expect(device?.definition.deviceType.deviceType).toBe(0x0015);
    expect(Object.keys(device?.definition.deviceType.behaviors ?? {})).toContain('booleanState');
    await pollUntil(() => stateOf(run)?.clusters, (clusters) => clusters?.bridgedDeviceBasicInformation.reachable === true && clusters.booleanState.stateValue === true, 1_000, 'closed and reachable', 10);

    run.devices.showAlerts(true);
    await pollUntil(() => stateOf(run)?.clusters.booleanState.stateValue, (value) => value === false, 1_000, 'open', 10);
    run.devices.showAlerts(false);
    await pollUntil(() => stateOf(run)?.clusters.booleanState.stateValue, (value) => value === true, 1_000, 'closed again', 10);
    expect(stateOf(run)?.clusters.bridgedDeviceBasicInformation.reachable).toBe(true);
  });

  it('counts as registered whatever features Homebridge gives its BooleanState (2.4.0 turns ChangeEvent on)', () => {
    expect(hasOtherFeatures('alerts', { featureMap: { changeEvent: true }, stateValue: true })).toBe(false);
    expect(hasOtherFeatures('motion', { featureMap: { passiveInfrared: true, occupancyEvent: true } })).toBe(true);
  });

  it('is registered open when it opened before Homebridge had registered it', async () => {
    const run = start({ firstAfterMs: 100 });
    run.devices.showAlerts(true);
    run.devices.publish(doorbells(1), { complete: true, alerts: true });

    await pollUntil(() => stateOf(run)?.clusters.booleanState?.stateValue, (value) => value === false, 5_000, 'open once registered', 10);
  });

  it('is unregistered when turned off, even while a doorbell entry is left out', async () => {
    const run = start({});
    const cached = matterAccessory(run.api, run.api.matter!, ALERTS_CONTEXT);
    run.devices.restore(cached);
    run.devices.publish(doorbells(1), { complete: false, alerts: false });
    await allShown(run, 5);

    expect(run.matter.calls.filter(({ method }) => method === 'unregistered').map(({ uuid }) => uuid)).toEqual([cached.UUID]);
  });

  it('is kept, reachable, while the config cannot be used', async () => {
    const run = start({});
    run.devices.restore(matterAccessory(run.api, run.api.matter!, ALERTS_CONTEXT));
    run.devices.showUnavailable();
    run.devices.showAlerts(true);

    await pollUntil(() => stateOf(run)?.clusters, (clusters) => clusters?.bridgedDeviceBasicInformation.reachable === true && clusters.booleanState.stateValue === false, 5_000, 'registered, open and reachable', 10);
  });
});

/** Waits that end at once when their owner stops, leaving no timer behind. */
describe('Pauses', () => {
  it('resolves true after the time, and after a turn of the event loop for 0', async () => {
    const pauses = new Pauses();
    const started = performance.now();

    expect(await pauses.pause(0)).toBe(true);
    expect(await pauses.pause(30)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });

  it('ends every pending wait with false when disposed, and every later one at once', async () => {
    // "At once" on a fake clock that never moves, rather than a bound on real time: the waits end
    // without any of their time passing, and leave no timer behind.
    jest.useFakeTimers();
    try {
      const pauses = new Pauses();
      const ended: boolean[] = [];
      for (const ms of [60_000, 0, 60_000]) {
        void pauses.pause(ms).then((completed) => ended.push(completed));
      }

      pauses.dispose();
      await jest.advanceTimersByTimeAsync(0);

      expect(ended).toEqual([false, false, false]);
      expect(jest.getTimerCount()).toBe(0);
      expect(await pauses.pause(60_000)).toBe(false);
      expect(jest.getTimerCount()).toBe(0);
      expect(pauses.disposed).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
