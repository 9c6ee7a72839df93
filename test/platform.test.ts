/**
 * The platform as Homebridge drives it (real HAP services and characteristics) against the simulator
 * over loopback HTTP: launch, sign-in, push registration, subscriptions, delivered motion, restarts,
 * an invalid session, and shutdown.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freeLoopbackPort } from './support/homebridge-config.js';
import { startSimulator } from '../simulator/index.js';
import type { Simulator } from '../simulator/types.js';
import { reloadFromCache } from './support/platform-accessory.js';
import { pollUntil } from './support/poll.js';
import {
  ACCOUNT,
  delay,
  DOORBELLS,
  FAST,
  launchPlatform,
  platformConfig,
  portIsFree,
  sensorValue,
  temporaryStorage,
  waitFor,
} from './support/platform-harness.js';
import type { RunningPlatform } from './support/platform-harness.js';

const [FRONT, BACK] = DOORBELLS.map((doorbell) => doorbell.deviceId);

let sim: Simulator;
let storage: Awaited<ReturnType<typeof temporaryStorage>>;
let pushPort: number;
const running: RunningPlatform[] = [];

beforeEach(async () => {
  sim = await startSimulator({ accounts: [{ ...ACCOUNT }], doorbells: DOORBELLS.map((doorbell) => doorbell.deviceId) });
  storage = await temporaryStorage();
  pushPort = await freeLoopbackPort();
});

afterEach(async () => {
  running.splice(0).forEach(({ test }) => test.shutdown());
  await waitUntilFree(pushPort);
  await sim.close();
  await storage.remove();
});

function launch(
  overrides: Record<string, unknown> = {},
  cached: RunningPlatform['test']['registered'] | undefined = undefined,
  timing = FAST,
): RunningPlatform {
  const restored = cached === undefined ? [] : [...cached.values()].map(reloadFromCache);
  const platform = launchPlatform(platformConfig(sim, pushPort, overrides), storage.path, restored, timing);
  running.push(platform);
  return platform;
}

async function stop(platform: RunningPlatform): Promise<void> {
  running.splice(running.indexOf(platform), 1);
  platform.test.shutdown();
  await waitUntilFree(pushPort);
}

/** Rejects when something still listens on the port after a second. */
async function waitUntilFree(port: number): Promise<void> {
  await pollUntil(() => portIsFree(port), (free) => free, 1_000, `port ${port} to be free`, 10);
}

/** HomeKit's view, not the simulator's: the service records a subscription before the plugin hears back. */
const allConfirmed = ({ test }: RunningPlatform): boolean =>
  DOORBELLS.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 0);
const logged = (platform: RunningPlatform, text: string): boolean => platform.log.lines.some((line) => line.message.includes(text));

describe('start-up', () => {
  it('publishes one faulted motion sensor per doorbell at launch, before any network answer', () => {
    const { test } = launch();

    expect(test.registered.size).toBe(2);
    expect([...test.registered.values()].map((accessory) => accessory.displayName)).toEqual(['Front Door', 'Back Door']);
    expect(sensorValue(test, FRONT, 'StatusFault')).toBe(1);
    expect(sensorValue(test, BACK, 'MotionDetected')).toBe(false);
  });

  it('signs in, registers, subscribes every doorbell, then clears the fault; each call exactly once and valid', async () => {
    const platform = launch();
    await waitFor(() => allConfirmed(platform), 'no fault');

    expect(sim.requestsTo('region')).toHaveLength(1);
    expect(sim.requestsTo('login')).toHaveLength(1);
    expect(sim.requestsTo('register')).toHaveLength(1);
    expect(sim.requestsTo('subscribe').map((request) => request.path).sort()).toEqual([
      `/clients_api/doorbots/${FRONT}/motions_subscribe`,
      `/clients_api/doorbots/${BACK}/motions_subscribe`,
    ]);
    expect(sim.invalidRequests()).toEqual([]);
    for (const milestone of ['Signed in as', 'Push receiver listening at 127.0.0.1', 'Registered for push notifications', '2 of 2 doorbells subscribed']) {
      expect(logged(platform, milestone)).toBe(true);
    }
  });

  it('turns a delivered motion notification into MotionDetected, exactly for an id above 2^53', async () => {
    const platform = launch();
    await waitFor(() => allConfirmed(platform), 'subscriptions');

    expect((await sim.deliverMotion(BACK)).status).toBe(202);
    expect(sensorValue(platform.test, BACK, 'MotionDetected')).toBe(true);
    expect(sensorValue(platform.test, FRONT, 'MotionDetected')).toBe(false);
    expect(logged(platform, 'Motion at Back Door')).toBe(true);

    expect((await sim.deliverMotion('9007199254740992')).status).toBe(202);
    expect(sensorValue(platform.test, FRONT, 'MotionDetected')).toBe(false);
  });
});

describe('refresh', () => {
  it('repeats the registration and every subscription each refresh period, without signing in again', async () => {
    const refreshMs = 150;
    const platform = launch({}, undefined, { ...FAST, schedule: { ...FAST.schedule, refreshMs } });
    await waitFor(() => sim.requestsTo('subscribe').length >= 6, 'two refreshes', 3_000);

    expect(sim.requestsTo('register').length).toBeGreaterThanOrEqual(3);
    expect(sim.requestsTo('login')).toHaveLength(1);
    expect(allConfirmed(platform)).toBe(true);
  });
});

describe('restart', () => {
  it('reuses the stored session: no login request, registration and subscriptions again, same accessories', async () => {
    const first = launch();
    await waitFor(() => allConfirmed(first), 'first subscriptions');
    await stop(first);
    sim.reset();

    const second = launch({}, first.test.registered);
    await waitFor(() => allConfirmed(second), 'second subscriptions');

    expect(sim.requestsTo('region')).toHaveLength(0);
    expect(sim.requestsTo('login')).toHaveLength(0);
    expect(sim.requestsTo('register')).toHaveLength(1);
    expect(second.test.calls.register).toBe(0);
    expect([...second.test.registered.keys()]).toEqual([...first.test.registered.keys()]);
  });

  it('unregisters the accessory of a doorbell removed from the config, and renames without a new UUID', async () => {
    const first = launch();
    await stop(first);

    const second = launch({ doorbells: [{ deviceId: FRONT, name: 'Porch' }] }, first.test.registered);

    expect(second.test.calls.unregister).toBe(1);
    expect([...second.test.registered.values()].map((accessory) => accessory.displayName)).toEqual(['Porch']);
    expect(second.test.calls.update).toBe(1);
  });

  it('keeps every cached accessory while a doorbell entry is bad, and runs the good ones', async () => {
    const first = launch();
    await stop(first);

    const second = launch({ doorbells: [{ deviceId: FRONT, name: 'Front Door' }, { deviceId: 'back' }] }, first.test.registered);
    await waitFor(() => sensorValue(second.test, FRONT, 'StatusFault') === 0, 'front subscribed');

    expect(second.test.registered.size).toBe(2);
    expect(logged(second, 'doorbells[1].deviceId must be an integer from 1 to 9223372036854775807')).toBe(true);
  });
});

describe('failures', () => {
  it('marks the session invalid on 401: every sensor faulted, a sign-in hint, no repeated requests', async () => {
    sim.injectFault('subscribe', { status: 401, times: 2 });
    const platform = launch();
    await waitFor(() => logged(platform, 'no longer accepts this session'), 'the sign-in hint');
    const requests = sim.requests.length;
    await delay(400);

    expect(sim.requests.length).toBe(requests);
    expect(sensorValue(platform.test, FRONT, 'StatusFault')).toBe(1);
    expect(sensorValue(platform.test, BACK, 'StatusFault')).toBe(1);
    const session = JSON.parse(await readFile(join(storage.path, 'doorbell-motion', 'session.json'), 'utf8'));
    expect(session.invalidatedAt).toEqual(expect.any(String));
  });

  it('spends a wrong code once: one login, a clear error, and never sent again after a restart', async () => {
    const platform = launch({ account: { ...platformConfig(sim, pushPort).account, code: '999999' } });
    await waitFor(() => logged(platform, '2018'), 'the 2018 error');
    await stop(platform);
    const again = launch({ account: { ...platformConfig(sim, pushPort).account, code: '999999' } });
    await waitFor(() => logged(again, 'already used'), 'the spent-code error');

    expect(sim.requestsTo('login')).toHaveLength(1);
    expect(sensorValue(again.test, FRONT, 'StatusFault')).toBe(1);
  });

  it('retries in the background after the service keeps failing, then subscribes', async () => {
    sim.injectFault('register', { status: 503, times: 5 });
    const platform = launch();
    await waitFor(() => logged(platform, 'Trying again in'), 'the retry notice');
    await waitFor(() => allConfirmed(platform), 'subscriptions after the retry');

    expect(sim.requestsTo('register')).toHaveLength(6);
    expect(sim.subscribedDoorbells.size).toBe(2);
  });

  it('retries a login answer that is not the service\'s in the background, with the same code, then subscribes', async () => {
    sim.injectFault('login', { rawBody: '<html>Bad gateway</html>', contentType: 'text/html' });
    const platform = launch();
    await waitFor(() => logged(platform, 'Trying again in'), 'the retry notice');
    await waitFor(() => allConfirmed(platform), 'subscriptions after the retry');

    expect(sim.requestsTo('login').map((request) => request.status)).toEqual([200, 200]);
    expect(sim.issuedTokens).toHaveLength(1);
    expect(platform.log.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('faults only the doorbell whose subscription failed, and retries only that one', async () => {
    sim.injectFault('subscribe', { status: 404, times: 1 });
    const platform = launch();
    await waitFor(() => logged(platform, '1 of 2 doorbells subscribed'), 'the partial subscription');
    await waitFor(() => allConfirmed(platform), 'both subscribed after the retry');

    expect(sim.requestsTo('subscribe')).toHaveLength(3);
    expect(sim.requestsTo('register')).toHaveLength(1);
  });
});

describe('configuration', () => {
  it('stays idle with one warning for a bare platform block', async () => {
    const platform = launchPlatformBare();
    await delay(100);

    expect(platform.log.lines).toEqual([{ level: 'warn', message: expect.stringContaining('Not configured yet') }]);
    expect(platform.test.registered.size).toBe(0);
    expect(sim.requests).toHaveLength(0);
  });

  it('sends nothing when the config is invalid, and names each problem', async () => {
    const platform = launch({ doorbellServerUrl: 'http://doorbell.example.com', motionTimeout: 2 });
    await delay(100);

    expect(sim.requests).toHaveLength(0);
    expect(platform.test.registered.size).toBe(0);
    expect(platform.log.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      'Configuration: doorbellServerUrl must be an https:// address (http:// only for localhost)',
      'Configuration: motionTimeout must be an integer from 5 to 3600',
      'Doing nothing until the configuration is fixed.',
    ]);
  });
});

describe('secrets', () => {
  it('writes no code, token, rriot key or push secret to any log line, at debug level, through motion and a refused session', async () => {
    sim.injectFault('subscribe', { status: 401 });
    const platform = launch();
    await waitFor(() => sim.pushToken !== undefined, 'the push registration');
    expect((await sim.deliverMotion(FRONT)).status).toBe(202);
    await waitFor(() => logged(platform, 'Motion at Front Door'), 'the motion');
    await waitFor(() => logged(platform, 'no longer accepts this session'), 'the sign-in hint');

    // What the simulator handed out or was given over the wire: code, tokens, rriot keys, push secret.
    expect(sim.secrets.length).toBeGreaterThanOrEqual(7);
    expect(platform.log.lines.some((line) => line.level === 'debug')).toBe(true);
    const leaks = platform.log.lines.filter((line) => sim.secrets.some((secret) => line.message.includes(secret)));
    expect(leaks).toEqual([]);
  });
});

function launchPlatformBare(): RunningPlatform {
  const platform = launchPlatform({ platform: 'DoorbellMotion' }, storage.path);
  running.push(platform);
  return platform;
}
