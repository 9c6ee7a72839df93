/**
 * The platform as Homebridge drives it (real HAP services and characteristics) against the simulator
 * over loopback HTTP: launch, sign-in, push registration, subscriptions, delivered motion, restarts,
 * an invalid session, and shutdown.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { delay, DOORBELLS, FAST, platformConfig, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from './support/platform-testbed.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);

const testbed = usePlatformTestbed();

describe('start-up', () => {
  it('publishes one faulted motion sensor per doorbell at launch, and the Doorbell Alerts sensor, before any network answer', () => {
    const { test } = testbed.launch();

    expect(test.registered.size).toBe(3);
    expect([...test.registered.values()].map((accessory) => accessory.displayName)).toEqual(['Front Door', 'Back Door', 'Doorbell Alerts']);
    expect(sensorValue(test, FRONT, 'StatusFault')).toBe(1);
    expect(sensorValue(test, BACK, 'MotionDetected')).toBe(false);
  });

  it('signs in, registers, subscribes every doorbell, then clears the fault; each call exactly once and valid', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'no fault');

    expect(testbed.sim.requestsTo('region')).toHaveLength(1);
    expect(testbed.sim.requestsTo('login')).toHaveLength(1);
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
    expect(testbed.sim.requestsTo('subscribe').map((request) => request.path).sort()).toEqual([
      `/clients_api/doorbots/${FRONT}/motions_subscribe`,
      `/clients_api/doorbots/${BACK}/motions_subscribe`,
    ]);
    expect(testbed.sim.invalidRequests()).toEqual([]);
    for (const milestone of ['Signed in as', 'Push receiver listening at 127.0.0.1', 'Registered for push notifications', '2 of 2 doorbells subscribed']) {
      expect(logged(platform, milestone)).toBe(true);
    }
  });

  it('turns a delivered motion notification into MotionDetected, exactly for an id above 2^53', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    expect((await testbed.sim.deliverMotion(BACK)).status).toBe(202);
    expect(sensorValue(platform.test, BACK, 'MotionDetected')).toBe(true);
    expect(sensorValue(platform.test, FRONT, 'MotionDetected')).toBe(false);
    expect(logged(platform, 'Motion at Back Door')).toBe(true);

    expect((await testbed.sim.deliverMotion('9007199254740992')).status).toBe(202);
    expect(sensorValue(platform.test, FRONT, 'MotionDetected')).toBe(false);
  });
});

describe('refresh', () => {
  it('repeats the registration and every subscription each refresh period, without signing in again', async () => {
    const refreshMs = 150;
    const platform = testbed.launch({ timing: { ...FAST, schedule: { ...FAST.schedule, refreshMs } } });
    await waitFor(() => testbed.sim.requestsTo('subscribe').length >= 6, 'two refreshes', 3_000);

    expect(testbed.sim.requestsTo('register').length).toBeGreaterThanOrEqual(3);
    expect(testbed.sim.requestsTo('login')).toHaveLength(1);
    expect(allConfirmed(platform)).toBe(true);
  });
});

describe('restart', () => {
  it('reuses the stored session: no login request, registration and subscriptions again, same accessories', async () => {
    const first = testbed.launch();
    await testbed.untilLaunchDone(first);
    await testbed.stop(first);
    testbed.sim.reset();

    const second = testbed.launch({ cached: first.test.registered });
    await waitFor(() => allConfirmed(second), 'second subscriptions');

    expect(testbed.sim.requestsTo('region')).toHaveLength(0);
    expect(testbed.sim.requestsTo('login')).toHaveLength(0);
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
    expect(second.test.calls.register).toBe(0);
    expect([...second.test.registered.keys()]).toEqual([...first.test.registered.keys()]);
  });

  it('unregisters the accessory of a doorbell removed from the config, and renames without a new UUID', async () => {
    const first = testbed.launch();
    await testbed.stop(first);

    const second = testbed.launch({ overrides: { doorbells: [{ deviceId: FRONT, name: 'Porch' }] }, cached: first.test.registered });

    expect(second.test.calls.unregister).toBe(1);
    expect([...second.test.registered.values()].map((accessory) => accessory.displayName)).toEqual(['Porch', 'Doorbell Alerts']);
    expect(second.test.calls.update).toBe(1);
  });

  it('keeps every cached accessory while a doorbell entry is bad, without its stale state, and runs the good ones', async () => {
    const first = testbed.launch();
    await waitFor(() => allConfirmed(first), 'first subscriptions');
    await testbed.sim.deliverMotion(BACK);
    expect([sensorValue(first.test, BACK, 'MotionDetected'), sensorValue(first.test, BACK, 'StatusFault')]).toEqual([true, 0]);
    await testbed.stop(first);

    const second = testbed.launch({ overrides: { doorbells: [{ deviceId: FRONT, name: 'Front Door' }, { deviceId: 'bad' }] }, cached: first.test.registered });

    expect(second.test.registered.size).toBe(3);
    expect(logged(second, 'doorbells[1].deviceId must be an integer from 1 to 9223372036854775807')).toBe(true);
    // Only the bad entry may own it, and nothing updates it until that entry is fixed.
    expect([sensorValue(second.test, BACK, 'MotionDetected'), sensorValue(second.test, BACK, 'StatusFault')]).toEqual([false, 1]);
    await waitFor(() => sensorValue(second.test, FRONT, 'StatusFault') === 0, 'front subscribed');
    expect((await testbed.sim.deliverMotion(FRONT)).status).toBe(202);
    expect(sensorValue(second.test, FRONT, 'MotionDetected')).toBe(true);
    expect([sensorValue(second.test, BACK, 'MotionDetected'), sensorValue(second.test, BACK, 'StatusFault')]).toEqual([false, 1]);
  });
});

describe('failures', () => {
  it('marks the session invalid on 401: every sensor faulted, a sign-in hint, no repeated requests', async () => {
    testbed.sim.injectFault('subscribe', { status: 401, times: 2 });
    const platform = testbed.launch();
    await waitFor(() => logged(platform, 'no longer accepts this session'), 'the sign-in hint');
    const requests = testbed.sim.requests.length;
    await delay(400);

    expect(testbed.sim.requests.length).toBe(requests);
    expect(sensorValue(platform.test, FRONT, 'StatusFault')).toBe(1);
    expect(sensorValue(platform.test, BACK, 'StatusFault')).toBe(1);
    const session = JSON.parse(await readFile(join(testbed.storagePath, 'doorbell-motion', 'session.json'), 'utf8'));
    expect(session.invalidatedAt).toEqual(expect.any(String));
  });

  it('spends a wrong code once: one login, a clear error, and never sent again after a restart', async () => {
    const platform = testbed.launch({ overrides: { account: { ...platformConfig(testbed.sim, testbed.pushPort).account, code: '999999' } } });
    await waitFor(() => logged(platform, '2018'), 'the 2018 error');
    await testbed.stop(platform);
    const again = testbed.launch({ overrides: { account: { ...platformConfig(testbed.sim, testbed.pushPort).account, code: '999999' } } });
    await waitFor(() => logged(again, 'already used'), 'the spent-code error');

    expect(testbed.sim.requestsTo('login')).toHaveLength(1);
    expect(sensorValue(again.test, FRONT, 'StatusFault')).toBe(1);
  });

  it('retries in the background after the service keeps failing, then subscribes', async () => {
    testbed.sim.injectFault('register', { status: 503, times: 5 });
    const platform = testbed.launch();
    await waitFor(() => logged(platform, 'Trying again in'), 'the retry notice');
    await waitFor(() => allConfirmed(platform), 'subscriptions after the retry');

    expect(testbed.sim.requestsTo('register')).toHaveLength(6);
    expect(testbed.sim.subscribedDoorbells.size).toBe(2);
  });

  it.each([
    ['an HTML page', { rawBody: '<html>Bad gateway</html>', contentType: 'text/html' }, 200],
    ['a 403 without the service\'s envelope (a proxy or firewall)', { status: 403 }, 403],
  ])('retries a login answered with %s in the background, with the same code, then subscribes', async (_answer, fault, status) => {
    testbed.sim.injectFault('login', fault);
    const platform = testbed.launch();
    const retryNotice = /failed: HTTP .*not what the service sends.* Trying again in/;
    await waitFor(() => platform.log.lines.some(({ message }) => retryNotice.test(message)), 'the retry notice');
    await waitFor(() => allConfirmed(platform), 'subscriptions after the retry');

    expect(testbed.sim.requestsTo('login').map((request) => request.status)).toEqual([status, 200]);
    expect(testbed.sim.issuedTokens).toHaveLength(1);
    expect(platform.log.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('faults only the doorbell whose subscription failed, and retries only that one', async () => {
    testbed.sim.injectFault('subscribe', { status: 404, times: 1 });
    const platform = testbed.launch();
    await waitFor(() => logged(platform, '1 of 2 doorbells subscribed'), 'the partial subscription');
    await waitFor(() => allConfirmed(platform), 'both subscribed after the retry');

    expect(testbed.sim.requestsTo('subscribe')).toHaveLength(3);
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
  });
});

describe('configuration', () => {
  it('stays idle with one warning for a bare platform block', async () => {
    const platform = launchPlatformBare();
    await delay(100);

    expect(platform.log.lines).toEqual([{ level: 'warn', message: expect.stringContaining('Not configured yet') }]);
    expect(platform.test.registered.size).toBe(0);
    expect(testbed.sim.requests).toHaveLength(0);
  });

  it('sends nothing when the config is invalid, and names each problem', async () => {
    const platform = testbed.launch({ overrides: { doorbellServerUrl: 'http://doorbell.example.com', motionTimeout: 2 } });
    await delay(100);

    expect(testbed.sim.requests).toHaveLength(0);
    expect(platform.test.registered.size).toBe(0);
    expect(platform.log.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      'Configuration: doorbellServerUrl must be an https:// address (http:// only for localhost), with a port from 1 to 65535 if it has one',
      'Configuration: motionTimeout must be an integer from 5 to 3600',
      'Doing nothing until the configuration is fixed.',
    ]);
  });
});

describe('secrets', () => {
  it('writes no code, token, rriot key or push secret to any log line, at debug level, through motion and a refused session', async () => {
    testbed.sim.injectFault('subscribe', { status: 401 });
    const platform = testbed.launch();
    await waitFor(() => testbed.sim.pushToken !== undefined, 'the push registration');
    expect((await testbed.sim.deliverMotion(FRONT)).status).toBe(202);
    await waitFor(() => logged(platform, 'Motion at Front Door'), 'the motion');
    await waitFor(() => logged(platform, 'no longer accepts this session'), 'the sign-in hint');

    // What the simulator handed out or was given over the wire: code, tokens, rriot keys, push secret.
    expect(testbed.sim.secrets.length).toBeGreaterThanOrEqual(7);
    expect(platform.log.lines.some((line) => line.level === 'debug')).toBe(true);
    const leaks = platform.log.lines.filter((line) => testbed.sim.secrets.some((secret) => line.message.includes(secret)));
    expect(leaks).toEqual([]);
  });
});

function launchPlatformBare(): RunningPlatform {
  return testbed.launch({ block: { platform: 'DoorbellMotion' } });
}
