/**
 * The Doorbell Alerts sensor on the running platform, real HAP objects against the simulator and the
 * loopback relay, with its minute shortened: closed while alerts flow; open, with one warning naming
 * the reason and what to do, once a doorbell has been down that long (a subscription failing, an
 * expired session, the relay gone, a config that cannot be used); never for a shorter break; closed
 * the moment the last doorbell is confirmed, with one line saying how long it lasted; its state kept
 * across a restart; and the outages in status.json.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { PlatformConfig } from 'homebridge';
import { alertsSensorUuid } from '../src/alerts/alerts-sensor.js';
import type { AlertsClock } from '../src/alerts/alerts-rule.js';
import type { Outage } from '../src/status/delivery-status.js';
import type { PlatformTiming } from '../src/platform.js';
import { dataFolderPath } from '../src/storage/data-folder.js';
import type { DeliveryStatus } from '../src/status/delivery-status.js';
import { hap } from '../scripts/lib/hap.js';
import { SHAPES } from './support/notification-payloads.js';
import { delay, DOORBELLS, FAST, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed, useLoopbackRelay } from './support/platform-testbed.js';

const [, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);
/** What the plugin says once Back Door's subscription has failed: the sensor's reason reads the same record. */
const BACK_FAILED = '1 of 2 doorbells subscribed to motion alerts; still trying: Back Door';

/**
 * The sensor's minute, shortened: well over what a launch here takes on a busy machine, and than the
 * relay's own grace (300 ms).
 */
const OPEN_AFTER_MS = 1_500;
const TIMING: PlatformTiming = { ...FAST, alerts: { openAfterMs: OPEN_AFTER_MS } };
const { CONTACT_DETECTED: CLOSED, CONTACT_NOT_DETECTED: OPEN } = hap.Characteristic.ContactSensorState;
const SETTINGS_PAGE = "on the plugin's settings page in the Homebridge UI";

const testbed = usePlatformTestbed();

function launch(options: Parameters<typeof testbed.launch>[0] = {}): RunningPlatform {
  return testbed.launch({ timing: TIMING, ...options });
}

function alertsService({ test }: RunningPlatform) {
  return test.registered.get(alertsSensorUuid(test.api))?.getService(hap.Service.ContactSensor);
}

/** ContactSensorState and StatusFault, as HomeKit reads them; undefined without the sensor. */
function alertsShown(platform: RunningPlatform): [unknown, unknown] | undefined {
  const service = alertsService(platform);
  return service && [service.getCharacteristic(hap.Characteristic.ContactSensorState).value, service.getCharacteristic(hap.Characteristic.StatusFault).value];
}

/** Every ContactSensorState value HAP announces from now on, which is what a controller is sent. */
function recordStates(platform: RunningPlatform): unknown[] {
  const states: unknown[] = [];
  alertsService(platform)
    ?.getCharacteristic(hap.Characteristic.ContactSensorState)
    .on('change', ({ newValue }) => states.push(newValue));
  return states;
}

const stopped = (platform: RunningPlatform) => platform.log.lines.filter(({ message }) => message.startsWith('Doorbell alerts stopped')).map(({ level, message }) => `${level}: ${message}`);
const recovered = (platform: RunningPlatform) =>
  platform.log.lines.filter(({ message }) => message.startsWith('Doorbell alerts are flowing again')).map(({ level, message }) => `${level}: ${message}`);

const waitOpen = (platform: RunningPlatform, timeoutMs = 5_000) => waitFor(() => alertsShown(platform)?.[0] === OPEN, 'the sensor to open', timeoutMs);

/**
 * The sensor's clock, moved on only by the test: it opens once the failure it should name has been
 * seen, however long a busy machine takes to get there (the reason is whatever is down at the open).
 */
function movedClock(): { clock: AlertsClock; advance: (ms: number) => void } {
  let now = 0;
  const timers: Array<{ at: number; action: () => void }> = [];
  const clock: AlertsClock = {
    monotonic: () => now,
    wall: () => Date.now(),
    after: (ms, action) => {
      const timer = { at: now + ms, action };
      timers.push(timer);
      return () => cancel(timer);
    },
  };
  const cancel = (timer: { at: number; action: () => void }): boolean => {
    const index = timers.indexOf(timer);
    if (index >= 0) {
      timers.splice(index, 1);
    }
    return index >= 0;
  };
  const advance = (ms: number) => {
    now += ms;
    // One that an earlier action cancelled does not run.
    for (const timer of timers.filter(({ at }) => at <= now).sort((a, b) => a.at - b.at)) {
      if (cancel(timer)) {
        timer.action();
      }
    }
  };
  return { clock, advance };
}

/** Launched with the sensor on a moved clock: its minute passes only when the test says so. */
function launchOnMovedClock(options: Parameters<typeof testbed.launch>[0] = {}): { platform: RunningPlatform; advance: (ms: number) => void } {
  const { clock, advance } = movedClock();
  return { platform: launch({ ...options, timing: { ...TIMING, ...options.timing, alerts: { openAfterMs: OPEN_AFTER_MS, clock } } }), advance };
}

/** Launched on a moved clock; the sensor's minute passes once `failed` holds. */
async function openOnceFailed(failed: (platform: RunningPlatform) => boolean, what: string, options: Parameters<typeof testbed.launch>[0] = {}): Promise<RunningPlatform> {
  const { platform, advance } = launchOnMovedClock(options);
  await waitFor(() => failed(platform), what);
  advance(OPEN_AFTER_MS);
  await waitOpen(platform);
  return platform;
}

describe('while alerts flow', () => {
  it('is one Doorbell Alerts contact sensor, closed once every doorbell is confirmed, answering from memory, and says nothing', async () => {
    const { platform, advance } = launchOnMovedClock();
    const accessory = platform.test.registered.get(alertsSensorUuid(platform.test.api));
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    advance(2 * OPEN_AFTER_MS);

    const information = accessory?.getService(hap.Service.AccessoryInformation);
    expect([hap.Characteristic.Manufacturer, hap.Characteristic.Model, hap.Characteristic.SerialNumber].map((type) => information?.getCharacteristic(type).value)).toEqual([
      'Doorbell Motion',
      'Alerts',
      'alerts',
    ]);
    expect(accessory?.services.filter(({ UUID }) => UUID === hap.Service.ContactSensor.UUID).map(({ displayName }) => displayName)).toEqual(['Doorbell Alerts']);
    expect(alertsShown(platform)).toEqual([CLOSED, 0]);
    expect(await alertsService(platform)?.getCharacteristic(hap.Characteristic.ContactSensorState).handleGetRequest()).toBe(CLOSED);
    expect([...stopped(platform), ...recovered(platform)]).toEqual([]);
  });

  it('is not opened by a first connection slower than usual', async () => {
    // The sensor's clock moves only here: most of its minute passes while the registration is held
    // up, however fast or slow this machine is, and the rest after every doorbell is confirmed.
    testbed.sim.injectFault('register', { delayMs: OPEN_AFTER_MS / 3 });
    const { platform, advance } = launchOnMovedClock();
    const states = recordStates(platform);
    advance(OPEN_AFTER_MS - 1);
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    advance(2 * OPEN_AFTER_MS);

    expect(states.filter((state) => state === OPEN)).toEqual([]);
    expect(alertsShown(platform)).toEqual([CLOSED, 0]);
    expect(stopped(platform)).toEqual([]);
  });
});

describe('when a doorbell has been down for the whole minute', () => {
  it('opens with a fault while a subscription keeps failing, naming the doorbell, and closes the moment it succeeds', async () => {
    testbed.sim.injectFault('subscribe', { status: 503, times: 10_000, deviceId: BACK });
    const platform = await openOnceFailed((running) => logged(running, BACK_FAILED), 'Back Door failed');
    expect(alertsShown(platform)).toEqual([OPEN, 1]);
    testbed.sim.clearFaults();
    await waitFor(() => sensorValue(platform.test, BACK, 'StatusFault') === 0, 'Back Door subscribed');

    // Told in the same turn as the doorbell's fault clearing: the sensor closes with it.
    expect(alertsShown(platform)).toEqual([CLOSED, 0]);
    expect(stopped(platform)).toEqual([
      `warn: Doorbell alerts stopped: the subscription of Back Door failed (the doorbell service answered HTTP 503). The plugin keeps trying; check the device ids ${SETTINGS_PAGE} if it goes on.`,
    ]);
    expect(recovered(platform)).toEqual([expect.stringMatching(/^info: Doorbell alerts are flowing again after \d+ s \(the subscription of Back Door failed \(the doorbell service answered HTTP 503\)\)$/)]);
  });

  it('opens on an expired session, saying to sign in again on the settings page', async () => {
    testbed.sim.injectFault('subscribe', { status: 401 });
    const platform = await openOnceFailed((running) => logged(running, 'no longer accepts this session'), 'the session refused');
    await delay(OPEN_AFTER_MS);

    expect(stopped(platform)).toEqual([expect.stringMatching(new RegExp(`^warn: Doorbell alerts stopped: the session expired\\. Sign in again: .* ${SETTINGS_PAGE}`))]);
  });

  it('opens while the push registration keeps failing, saying why', async () => {
    testbed.sim.injectFault('register', { status: 503, times: 10_000 });
    const platform = await openOnceFailed((running) => logged(running, 'PATCH /clients_api/device failed: HTTP 503'), 'the registration failed');

    expect(stopped(platform)).toEqual([expect.stringMatching(/^warn: Doorbell alerts stopped: the push registration failed \(the doorbell service answered HTTP 503\)\. The plugin keeps trying; check doorbellServerUrl /)]);
  });

  it('opens when a refresh cannot register, the doorbells down with it, and closes once a retry gets through', async () => {
    const platform = launch({ timing: { ...TIMING, schedule: { ...FAST.schedule, refreshMs: 300 } } });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    testbed.sim.injectFault('register', { status: 503, times: 10_000 });
    await waitFor(() => !allConfirmed(platform), 'the refresh to fail');
    expect(DOORBELLS.map(({ deviceId }) => sensorValue(platform.test, deviceId, 'StatusFault'))).toEqual([1, 1]);
    await waitOpen(platform);
    testbed.sim.clearFaults();
    await waitFor(() => alertsShown(platform)?.[0] === CLOSED, 'the sensor to close');

    expect(allConfirmed(platform)).toBe(true);
    expect(stopped(platform)).toEqual([expect.stringMatching(/^warn: Doorbell alerts stopped: the push registration failed \(the doorbell service answered HTTP 503\)\. /)]);
    expect(recovered(platform)).toEqual([expect.stringMatching(/^info: Doorbell alerts are flowing again after \d+ s \(the push registration failed \(the doorbell service answered HTTP 503\)\)$/)]);
  });

  it('opens while the push receiver cannot listen, naming its address', async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(testbed.pushPort, '127.0.0.1', resolve));
    try {
      // The line the connection says once it has recorded the failure: the sensor's reason reads that record.
      const failedLine = `Push receiver cannot listen on 127.0.0.1:${testbed.pushPort}: the port is already in use. Trying again as soon as it opens`;
      const platform = await openOnceFailed((running) => logged(running, failedLine), 'the receiver failing to listen');

      expect(stopped(platform)).toEqual([
        `warn: Doorbell alerts stopped: the push receiver cannot listen on 127.0.0.1:${testbed.pushPort}. Free port ${testbed.pushPort}, or choose another push.port, push.host or relay mode ${SETTINGS_PAGE}.`,
      ]);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('opens on an invalid configuration, keeping the cached sensor, and sends nothing', async () => {
    const first = launch();
    await testbed.untilLaunchDone(first);
    await testbed.stop(first);
    testbed.sim.reset();

    const second = launch({ overrides: { motionTimeout: 2 }, cached: first.test.registered });
    expect(alertsShown(second)).toEqual([CLOSED, 0]);
    await waitOpen(second);

    expect(stopped(second)).toEqual([`warn: Doorbell alerts stopped: the configuration is invalid. Fix the settings the log names, ${SETTINGS_PAGE}, and restart Homebridge.`]);
    expect(testbed.sim.requests).toEqual([]);
  });
});

describe('in relay mode', () => {
  const relay = useLoopbackRelay();

  it('is not opened by the relay stream breaking and coming back', async () => {
    // The sensor's own minute passes only after the breaks; a break it is told of is dated by the
    // relay's real time, which stays short as long as the stream comes back within the relay's grace.
    const { platform, advance } = launchOnMovedClock({ relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const states = recordStates(platform);
    for (let i = 0; i < 4; i += 1) {
      relay().dropStreams();
      await delay(OPEN_AFTER_MS / 3);
    }
    await waitFor(() => allConfirmed(platform), 'the stream back');
    advance(2 * OPEN_AFTER_MS);

    expect(states.filter((state) => state === OPEN)).toEqual([]);
    expect(stopped(platform)).toEqual([]);
  });

  it('opens once the relay has been unreachable, saying since when, and closes as soon as it is back', async () => {
    const { platform, advance } = launchOnMovedClock({ relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    relay().refuseSubscriptions({ status: 503, times: 10_000 });
    relay().dropStreams();
    // The sensor's minute passes once the plugin has given the relay up, not while it still tries.
    await waitFor(() => logged(platform, 'Push relay unreachable for'), 'the relay given up');
    advance(OPEN_AFTER_MS);
    await waitOpen(platform);
    relay().refuseSubscriptions({ status: 503, times: 0 });
    await waitFor(() => allConfirmed(platform), 'the relay back');

    expect(alertsShown(platform)).toEqual([CLOSED, 0]);
    expect(stopped(platform)).toEqual([
      expect.stringMatching(/^warn: Doorbell alerts stopped: the relay has been unreachable since (\d{4}-\d\d-\d\d )?\d\d:\d\d\. Check this Homebridge's internet connection and push\.relayUrl /),
    ]);
    expect(recovered(platform)).toEqual([expect.stringMatching(/^info: Doorbell alerts are flowing again after \d+ s \(the relay has been unreachable since (\d{4}-\d\d-\d\d )?\d\d:\d\d\)$/)]);
  });

  it('makes the stale drops of one catch-up one outage when alerts never stopped: late, from the oldest, with one warning', async () => {
    const platform = launch({ relayUrl: relay().url });
    await waitFor(() => allConfirmed(platform), 'subscriptions');
    const states = recordStates(platform);
    const connects = () => platform.log.lines.filter(({ message }) => message.startsWith('push relay connected')).length;
    const droppedAt = Date.now();
    relay().dropStreams();
    await waitFor(() => connects() === 2, 'the reconnect');
    // A relay that replays, after a short break, rings sent minutes ago: too old to show.
    const topic = new URL(testbed.sim.pushToken ?? 'http://x/').pathname.slice(1);
    const sentAt = Math.floor(Date.now() / 1000) - 300;
    for (const [index, ageS] of [200, 300].entries()) {
      const message = SHAPES.flat({ deviceId: BACK, kind: 'ding', id: `"old-${index}"` });
      relay().injectLine(topic, JSON.stringify({ id: `oldmessage0${index}`, time: sentAt + 300 - ageS, event: 'message', topic, message }));
    }
    const written = await testbed.statusWhere('the late rings', ({ outages }) => outages?.[0]?.late === 2);
    const seenAt = Date.now();

    expect(written.dropped?.stale).toBe(2);
    expect(written.outages).toEqual([{ from: expect.any(String), to: expect.any(String), reason: 'alerts came too late to show', late: 2 }]);
    const [{ from, to }] = written.outages ?? [];
    expect(Date.parse(to as string) - Date.parse(from)).toBeGreaterThanOrEqual(300_000 - 1_000);
    // The relay's times are whole seconds, placed on this clock by the offset the plugin measures as a
    // line arrives: a second of rounding, plus however late the line was read, which a starved machine
    // stretches, and never by more than the whole wait since the drop.
    expect(Date.parse(from)).toBeLessThanOrEqual(sentAt * 1000 + 1_000 + (seenAt - droppedAt));
    expect(written.alerts?.flowing).toBe(true);
    expect(states.filter((state) => state === OPEN)).toEqual([]);
    expect(platform.log.lines.filter(({ level, message }) => level === 'warn' && message.startsWith('Doorbell alerts')).map(({ message }) => message)).toEqual([
      expect.stringMatching(/^Doorbell alerts came too late to show: one sent \d+ min ago reached this Homebridge only when the push relay stream came back\. /),
    ]);
  });

  it('says the relay refused access when it does', async () => {
    relay().refuseSubscriptions({ status: 403, times: 10_000 });
    // The connection records the relay as the cause when it stops waiting for the stream, and says then when it tries again.
    const refused = (running: RunningPlatform) => logged(running, 'Push relay refused access (HTTP 403)') && logged(running, 'Trying again as soon as it opens');
    const platform = await openOnceFailed(refused, 'the relay refusing access', { relayUrl: relay().url });

    expect(stopped(platform)).toEqual([expect.stringMatching(/^warn: Doorbell alerts stopped: the relay refused access\. Check push\.relayToken /)]);
  });
});

describe('across a restart', () => {
  it('stays open while the cause lasts, told once more, as one outage; then closes and ends it', async () => {
    testbed.sim.injectFault('subscribe', { status: 503, times: 10_000, deviceId: BACK });
    const first = await openOnceFailed((running) => logged(running, BACK_FAILED), 'Back Door failed');
    const opened = await testbed.statusWhere('the outage written', ({ outages }) => outages?.length === 1);
    await testbed.stop(first);

    const second = launch({ cached: first.test.registered });
    const states = recordStates(second);
    expect(alertsShown(second)).toEqual([OPEN, 1]);
    await waitFor(() => stopped(second).length === 1, 'the warning at launch');
    testbed.sim.clearFaults();
    await waitFor(() => alertsShown(second)?.[0] === CLOSED, 'the sensor to close');

    expect(states.filter((state) => state === CLOSED)).toEqual([CLOSED]);
    expect(recovered(second)).toEqual([expect.stringMatching(/^info: Doorbell alerts are flowing again after \d+ s \(the subscription of Back Door failed/)]);
    const closed = await testbed.statusWhere('the outage ended', ({ alerts }) => alerts?.flowing === true);
    expect(closed.outages).toEqual([{ ...opened.outages?.[0], to: expect.any(String) }]);
    expect(closed.alerts).toEqual({ flowing: true, since: closed.outages?.[0].to, reason: null });
  });

  it('never blinks open when it was closed: a launch takes less than the minute', async () => {
    const first = launch();
    await waitFor(() => allConfirmed(first), 'subscriptions');
    await testbed.stop(first);

    // The sensor's minute passes after the launch, however long the launch took on this machine.
    const { platform: second, advance } = launchOnMovedClock({ cached: first.test.registered });
    expect(alertsShown(second)).toEqual([CLOSED, 0]);
    const states = recordStates(second);
    await waitFor(() => allConfirmed(second), 'subscriptions again');
    advance(2 * OPEN_AFTER_MS);

    expect(states.filter((state) => state === OPEN)).toEqual([]);
    expect([...stopped(second), ...recovered(second)]).toEqual([]);
  });

  it('removes the sensor with alertsSensor: false, and still says and writes when alerts stop', async () => {
    const first = launch();
    await waitFor(() => allConfirmed(first), 'subscriptions');
    await testbed.stop(first);
    testbed.sim.injectFault('subscribe', { status: 503, times: 10_000, deviceId: BACK });

    const second = launch({ overrides: { alertsSensor: false }, cached: first.test.registered });
    expect(second.test.registered.has(alertsSensorUuid(second.test.api))).toBe(false);
    expect(logged(second, 'Removed Doorbell Alerts: alertsSensor is off')).toBe(true);
    await waitFor(() => stopped(second).length === 1, 'the warning');
    await testbed.statusWhere('alerts stopped', ({ alerts }) => alerts?.flowing === false);
  });
});

describe('status.json', () => {
  /** 20 outages of the night before, an hour each, newest first. */
  const earlier: Outage[] = Array.from({ length: 20 }, (_, index) => {
    const to = Date.now() - (2 * index + 1) * 3_600_000;
    return { from: new Date(to - 3_600_000).toISOString(), to: new Date(to).toISOString(), reason: `the session expired ${index}` };
  });

  async function writePreviousStatus(status: Partial<DeliveryStatus>): Promise<void> {
    await mkdir(dataFolderPath(testbed.storagePath), { recursive: true, mode: 0o700 });
    await writeFile(testbed.statusPath, JSON.stringify(status), { mode: 0o600 });
  }

  it('carries the last run\'s outages over, adds each new one first, and keeps the newest 20', async () => {
    const previous = JSON.parse(JSON.stringify({ alerts: { flowing: true, since: earlier[0].to, reason: null }, outages: earlier }));
    await writePreviousStatus({ pid: 1, startedAt: earlier[19].from, updatedAt: earlier[0].to as string, pushMode: 'direct', registeredAt: null, nextRefreshAt: null, session: 'signed-in', doorbells: [], ...previous });
    testbed.sim.injectFault('subscribe', { status: 503, times: 10_000, deviceId: BACK });
    const { platform, advance } = launchOnMovedClock();
    const carried = await testbed.statusWhere('the first status', ({ pid }) => pid === process.pid);
    expect(carried.outages).toEqual(earlier);
    await waitFor(() => logged(platform, BACK_FAILED), 'Back Door failed');
    advance(OPEN_AFTER_MS);
    await waitOpen(platform);

    const reason = 'the subscription of Back Door failed (the doorbell service answered HTTP 503)';
    const written = await testbed.statusWhere('the new outage', ({ alerts }) => alerts?.flowing === false);
    expect(written.alerts).toEqual({ flowing: false, since: written.outages?.[0].from, reason });
    expect(written.outages).toEqual([{ from: expect.any(String), to: null, reason, late: 0 }, ...earlier.slice(0, 19)]);
    expect(Date.parse(written.outages?.[0].from ?? '')).toBeLessThanOrEqual(Date.now() - OPEN_AFTER_MS);
  });
});

describe('a bridge full of doorbells', () => {
  it('leaves the sensor out of HomeKit with a warning, rather than have HAP-NodeJS refuse the 150th accessory', () => {
    const doorbells = Array.from({ length: 149 }, (_, index) => ({ deviceId: String(1_000_000 + index), name: `Door ${index + 1}` }));
    const platform = launch({ doorbells });

    expect(platform.test.bridge.bridgedAccessories).toHaveLength(149);
    expect(platform.test.registered.has(alertsSensorUuid(platform.test.api))).toBe(false);
    expect(logged(platform, 'Doorbell Alerts is not in HomeKit: a bridge holds 149 accessories, all of them doorbells.')).toBe(true);
  });
});

/** A bare block, unconfigured: the cached sensor opens too, naming what to do. */
describe('an unconfigured platform block', () => {
  it('opens the cached sensor, saying to sign in and add the doorbells on the settings page', async () => {
    const first = launch();
    await testbed.stop(first);

    const second = launch({ block: { platform: 'DoorbellMotion' } as PlatformConfig, cached: first.test.registered });
    await waitOpen(second);

    expect(stopped(second)).toEqual([`warn: Doorbell alerts stopped: the plugin is not configured yet. Sign in and add your doorbells ${SETTINGS_PAGE}, then restart Homebridge.`]);
  });
});
