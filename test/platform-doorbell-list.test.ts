/**
 * A session that ends between two refreshes, on the running platform with the production schedule
 * on a fake clock (sockets, files and the simulator in real time): the doorbell list read every 15
 * minutes finds it, the doorbells show a fault, the log says to sign in again, and the Doorbell
 * Alerts sensor opens a minute later, rather than 12 hours on at the next refresh.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { ALERTS_OPEN_AFTER_MS } from '../src/alerts/alerts-rule.js';
import { alertsSensorUuid } from '../src/alerts/alerts-sensor.js';
import { SecretMaskingLogger } from '../src/log.js';
import { advice } from '../src/session/advice.js';
import { openDataFolder } from '../src/storage/data-folder.js';
import { SessionStore } from '../src/session/session-store.js';
import { signInWithCode } from '../src/session/sign-in.js';
import { hap } from '../scripts/lib/hap.js';
import { createTestLogger } from '../scripts/lib/homebridge-api.js';
import { ACCOUNT, DOORBELLS, sensorValue, temporaryStorage } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, usePlatformTestbed } from './support/platform-testbed.js';
import { PRODUCTION_SCHEDULE, runUntil } from './support/fake-clock.js';

const MINUTE = 60_000;
const { CONTACT_DETECTED: CLOSED, CONTACT_NOT_DETECTED: OPEN } = hap.Characteristic.ContactSensorState;

const TIMING = PRODUCTION_SCHEDULE;

/** Lets real I/O run until `condition` holds, the fake clock standing still. */
const until = (condition: () => boolean, what: string, timeoutMs?: number) => runUntil(condition, what, 0, timeoutMs);

/** Moves the fake clock on a minute at a time, letting real I/O run in between. */
async function minutesPass(minutes: number): Promise<void> {
  for (let minute = 0; minute < minutes; minute += 1) {
    await jest.advanceTimersByTimeAsync(MINUTE);
    await sleep(1);
  }
}

const allFaulted = ({ test }: RunningPlatform) => DOORBELLS.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 1);

function alertsState({ test }: RunningPlatform): unknown {
  return test.registered.get(alertsSensorUuid(test.api))?.getService(hap.Service.ContactSensor)?.getCharacteristic(hap.Characteristic.ContactSensorState).value;
}

const stopped = (platform: RunningPlatform) => platform.log.lines.filter(({ message }) => message.startsWith('Doorbell alerts stopped')).map(({ message }) => message);

describe('a session that ends between refreshes', () => {
  const testbed = usePlatformTestbed();

  /** Launches with every timer on the fake clock. */
  function launchOnFakeClock(overrides: Record<string, unknown> = {}): RunningPlatform {
    jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
    return testbed.launch({ timing: TIMING, overrides });
  }

  it('is found by the list read within 15 minutes: the doorbells fault, the log says to sign in again, and the sensor opens a minute later', async () => {
    try {
      const platform = launchOnFakeClock();
      const launchRead = () => testbed.sim.requestsTo('devices').some(({ status }) => status === 200);
      await until(() => allConfirmed(platform) && alertsState(platform) === CLOSED && launchRead(), 'the launch and the list read after its run');
      testbed.sim.revokeToken(testbed.sim.issuedTokens[0]);

      await minutesPass(15);
      await until(() => allFaulted(platform), 'the faults');

      expect(testbed.sim.requestsTo('devices').map(({ status }) => status)).toEqual([200, 401]);
      // Only the list read was sent: no refresh, no retry.
      expect(testbed.sim.requestsTo('register')).toHaveLength(1);
      await until(() => platform.log.lines.some(({ message }) => message === advice.sessionRejected), 'the advice');
      expect(platform.log.lines.filter(({ level }) => level === 'error').map(({ message }) => message)).toEqual([advice.sessionRejected]);

      await jest.advanceTimersByTimeAsync(ALERTS_OPEN_AFTER_MS - 1);
      expect(alertsState(platform)).toBe(CLOSED);
      await jest.advanceTimersByTimeAsync(1);
      expect(alertsState(platform)).toBe(OPEN);
      expect(stopped(platform)).toEqual([expect.stringMatching(/^Doorbell alerts stopped: the session expired\. Sign in again: /)]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('with doorbellAccessToken, a 401 on the list is the token refused', async () => {
    // A token the service issued: the runs get through with it, and only the list refuses it.
    const storage = await temporaryStorage();
    try {
      const log = createTestLogger('UI');
      const account = { serverUrl: testbed.sim.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };
      const { login } = await signInWithCode(account, ACCOUNT.code, { store: new SessionStore(openDataFolder(storage.path, log), log), log: new SecretMaskingLogger(log) });
      testbed.sim.setDeviceListMode('unauthorized');
      const platform = launchOnFakeClock({ account: undefined, doorbellAccessToken: login.token });

      await until(() => testbed.sim.requestsTo('devices').length === 1 && allFaulted(platform), 'the refused token');
      await jest.advanceTimersByTimeAsync(ALERTS_OPEN_AFTER_MS);

      expect(testbed.sim.requestsTo('subscribe').map(({ status }) => status)).toEqual([200, 200]);
      expect(alertsState(platform)).toBe(OPEN);
      expect(stopped(platform)).toEqual([expect.stringMatching(/^Doorbell alerts stopped: the doorbell access token was refused\. Replace doorbellAccessToken /)]);
    } finally {
      jest.useRealTimers();
      await storage.remove();
    }
  });
});
