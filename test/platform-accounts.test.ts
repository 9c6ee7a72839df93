/**
 * Several accounts in one platform block, real HAP objects against the simulator over real HTTP: each
 * account signs in with its own code and subscribes its own doorbells with its own token, one push
 * channel brings every account's motions, and what happens to one account's session (revoked, signed
 * out) faults only its own doorbells. The files of each account live in its own folder; a config that
 * gains `accounts` keeps the session it had at the top. status.json and the log name each account by
 * its label, never by its key, token or e-mail.
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import type { PlatformConfig } from 'homebridge';
import type { AlertsClock } from '../src/alerts/alerts-rule.js';
import { alertsSensorUuid } from '../src/alerts/alerts-sensor.js';
import type { PlatformTiming } from '../src/platform.js';
import { SessionStore } from '../src/session/session-store.js';
import { accountFolderPath, dataFolderPath, openAccountFolder } from '../src/storage/data-folder.js';
import { accountKey } from '../src/values/address.js';
import { hap } from '../scripts/lib/hap.js';
import { createTestLogger } from '../scripts/lib/homebridge-api.js';
import { ACCOUNT, DOORBELLS, FAST, platformConfig, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { linesRevealing } from './support/log-secrets.js';
import { allConfirmed, logged, usePlatformTestbed, useLoopbackRelay } from './support/platform-testbed.js';

interface TestAccount {
  label: string;
  email: string;
  code: string;
  doorbells: ReadonlyArray<{ deviceId: string; name: string }>;
}

/** The simulator's first account, whose doorbells are the simulator's own (DOORBELLS). */
const HOME: TestAccount = { label: 'Home', email: ACCOUNT.email, code: ACCOUNT.code, doorbells: DOORBELLS };
const CABIN: TestAccount = {
  label: 'Cabin',
  email: 'cabin@example.com',
  code: '222222',
  doorbells: [
    { deviceId: '2000001', name: 'Cabin Door' },
    { deviceId: '2000002', name: 'Cabin Gate' },
  ],
};
const BARN: TestAccount = { label: 'Barn', email: 'Barn@Example.com', code: '333333', doorbells: [{ deviceId: '3000001', name: 'Barn Door' }] };

const { CONTACT_NOT_DETECTED: OPEN } = hap.Characteristic.ContactSensorState;
const OPEN_AFTER_MS = 1_500;

const testbed = usePlatformTestbed();

/** Adds the accounts after the first to the simulator, each with its own doorbells (and `extra` ids it may also subscribe). */
function addToSimulator(accounts: readonly TestAccount[], extra: Record<string, string[]> = {}): void {
  for (const { email, code, doorbells } of accounts.filter(({ email }) => email !== HOME.email)) {
    testbed.sim.addAccount({ email, code, doorbells: [...doorbells.map(({ deviceId }) => deviceId), ...(extra[email] ?? [])] });
  }
}

/** The testbed's block with `accounts` instead of the top-level account: relay mode through `relayUrl`, else direct mode. */
function accountsBlock(accounts: readonly TestAccount[], relayUrl?: string, doorbellsOf: (account: TestAccount) => TestAccount['doorbells'] = ({ doorbells }) => doorbells): PlatformConfig {
  const { account, doorbellServerUrl, doorbells, ...rest } = platformConfig(testbed.sim, relayUrl ?? testbed.pushPort);
  void doorbells;
  const top = account as Record<string, unknown>;
  return {
    ...rest,
    accounts: accounts.map((entry) => ({
      label: entry.label,
      account: { ...top, email: entry.email, code: entry.code },
      doorbellServerUrl,
      doorbells: doorbellsOf(entry),
    })),
  } as PlatformConfig;
}

function launchAccounts(accounts: readonly TestAccount[], options: { relayUrl?: string; timing?: PlatformTiming } = {}): RunningPlatform {
  addToSimulator(accounts);
  return testbed.launch({ block: accountsBlock(accounts, options.relayUrl), timing: options.timing });
}

const doorbellsOf = (accounts: readonly TestAccount[]) => accounts.flatMap(({ doorbells }) => doorbells);
const fault = (platform: RunningPlatform, doorbells: TestAccount['doorbells']) => doorbells.map(({ deviceId }) => sensorValue(platform.test, deviceId, 'StatusFault'));
const keyOf = ({ email }: TestAccount) => accountKey({ account: { serverUrl: testbed.sim.accountUrl, email } }) as string;

/** The device ids an account's token subscribed, in order. */
function subscribedBy({ email }: TestAccount): string[] {
  return testbed.sim
    .requestsOf(email)
    .filter(({ route }) => route === 'subscribe')
    .map(({ path }) => /\/doorbots\/(\d+)\//.exec(path)?.[1] ?? path);
}

function alertsState({ test }: RunningPlatform): unknown {
  return test.registered.get(alertsSensorUuid(test.api))?.getService(hap.Service.ContactSensor)?.getCharacteristic(hap.Characteristic.ContactSensorState).value;
}

/** The sensor's clock, moved on only by the test, so it opens once the failure it names has been seen. */
function movedClock(): { clock: AlertsClock; advance: (ms: number) => void } {
  let now = 0;
  const timers = new Set<{ at: number; action: () => void }>();
  const clock: AlertsClock = {
    monotonic: () => now,
    wall: () => Date.now(),
    after: (ms, action) => {
      const timer = { at: now + ms, action };
      timers.add(timer);
      return () => timers.delete(timer);
    },
  };
  const advance = (ms: number) => {
    now += ms;
    for (const timer of [...timers].filter(({ at }) => at <= now).sort((a, b) => a.at - b.at)) {
      if (timers.delete(timer)) {
        timer.action();
      }
    }
  };
  return { clock, advance };
}

describe('several accounts', () => {
  it.each([
    ['two', [HOME, CABIN]],
    ['three', [HOME, CABIN, BARN]],
  ])('signs %s accounts in at once, each subscribing its own doorbells with its own token, and brings a motion of each to its accessory', async (_, accounts) => {
    const platform = launchAccounts(accounts);

    await waitFor(() => allConfirmed(platform, doorbellsOf(accounts)), 'every account subscribed');

    for (const account of accounts) {
      const requests = testbed.sim.requestsOf(account.email);
      const [token] = testbed.sim.account(account.email)?.tokens ?? [];
      expect(requests.filter(({ route }) => route === 'login')).toHaveLength(1);
      expect(requests.filter(({ route }) => route === 'register')).toHaveLength(1);
      expect(subscribedBy(account).sort()).toEqual(account.doorbells.map(({ deviceId }) => deviceId).sort());
      const doorbellRequests = requests.filter(({ service }) => service === 'doorbell');
      expect(doorbellRequests.every(({ headers }) => String(headers.authorization).endsWith(token))).toBe(true);
    }
    // One push channel: every account registered the same push token.
    const registered = testbed.sim.requestsTo('register').map(({ body }) => (JSON.parse(body) as { device: { push_notification_token: string } }).device.push_notification_token);
    expect(new Set(registered).size).toBe(1);
    expect(testbed.sim.invalidRequests()).toEqual([]);

    for (const { doorbells } of accounts) {
      const { deviceId } = doorbells[doorbells.length - 1];
      expect((await testbed.sim.deliverMotion(deviceId)).status).toBe(202);
      await waitFor(() => sensorValue(platform.test, deviceId, 'MotionDetected') === true, `the motion of ${deviceId}`);
    }
  });

  it('keeps each account in its own folder, and status.json names each by its label with its own session, never its key, token or e-mail', async () => {
    const platform = launchAccounts([HOME, CABIN]);
    await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, CABIN])), 'every account subscribed');

    const status = await testbed.statusWhere('both accounts registered', (written) => (written.accounts ?? []).every(({ registeredAt }) => registeredAt !== null));

    expect(status.accounts).toEqual([
      { label: 'Home', session: 'signed-in', signedInAt: expect.any(String), registeredAt: expect.any(String), nextRefreshAt: expect.any(String) },
      { label: 'Cabin', session: 'signed-in', signedInAt: expect.any(String), registeredAt: expect.any(String), nextRefreshAt: expect.any(String) },
    ]);
    for (const key of ['session', 'signedInAt', 'registeredAt', 'nextRefreshAt']) {
      expect(Object.keys(status)).not.toContain(key);
    }
    expect(status.doorbells.map(({ deviceId, label, fault }) => [deviceId, label, fault])).toEqual([
      ...HOME.doorbells.map(({ deviceId }) => [deviceId, 'Home', null]),
      ...CABIN.doorbells.map(({ deviceId }) => [deviceId, 'Cabin', null]),
    ]);
    const text = await readFile(testbed.statusPath, 'utf8');
    expect(linesRevealing([text], [...testbed.sim.secrets, HOME.email, CABIN.email.toLowerCase(), keyOf(HOME), keyOf(CABIN)])).toEqual([]);

    for (const account of [HOME, CABIN]) {
      expect((await readdir(accountFolderPath(testbed.storagePath, keyOf(account)))).sort()).toEqual(['installation.json', 'session.json']);
    }
    expect(await readdir(dataFolderPath(testbed.storagePath))).not.toContain('session.json');
  });

  it('names the account at the start of each line about its session, registration and subscriptions, and logs no secret nor an e-mail beyond its sign-in', async () => {
    const platform = launchAccounts([HOME, CABIN]);
    await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, CABIN])), 'every account subscribed');
    await waitFor(() => testbed.sim.requestsTo('devices').length === 2, 'both doorbell list reads');

    const messages = platform.log.lines.map(({ message }) => message);
    for (const { label, email } of [HOME, CABIN]) {
      expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^\\[${label}\\] Signed in as .*${email.replace(/[.+]/g, '\\$&')}`)));
      expect(messages).toContainEqual(`[${label}] Registered for push notifications at http://127.0.0.1:${testbed.pushPort}`);
      expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^\\[${label}\\] 2 of 2 doorbells subscribed`)));
    }
    const about = messages.filter((message) => /sign|session|regist|subscri/i.test(message));
    expect(about.filter((message) => !/^\[(Home|Cabin)\] /.test(message))).toEqual([]);
    expect(linesRevealing(messages, testbed.sim.secrets)).toEqual([]);
    const withEmail = messages.filter((message) => message.toLowerCase().includes(HOME.email) || message.toLowerCase().includes(CABIN.email));
    expect(withEmail.every((message) => /^\[(Home|Cabin)\] Signed in as /.test(message))).toBe(true);
  });

  describe('through the relay', () => {
    const relay = useLoopbackRelay();

    it("faults only the doorbells of an account whose session the service ends, opens Doorbell Alerts naming it, and keeps the stream and the other's motions", async () => {
      const { clock, advance } = movedClock();
      // The doorbell list read is what finds the ended session between refreshes: soon, here.
      const timing: PlatformTiming = { ...FAST, schedule: { ...FAST.schedule, listReadMs: 200 }, alerts: { openAfterMs: OPEN_AFTER_MS, clock } };
      const platform = launchAccounts([HOME, CABIN], { relayUrl: relay().url, timing });
      await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, CABIN])), 'every account subscribed');
      const topic = new URL(testbed.sim.pushToken ?? 'http://x/').pathname.slice(1);
      expect(relay().subscriberCount(topic)).toBe(1);

      testbed.sim.revokeAccount(CABIN.email);

      await waitFor(() => fault(platform, CABIN.doorbells).every((value) => value === 1), "Cabin's doorbells faulted");
      advance(OPEN_AFTER_MS);
      await waitFor(() => alertsState(platform) === OPEN, 'the sensor to open');
      expect(fault(platform, HOME.doorbells)).toEqual([0, 0]);
      expect(platform.log.lines.filter(({ message }) => message.startsWith('Doorbell alerts stopped'))).toEqual([
        { level: 'warn', message: expect.stringMatching(/^Doorbell alerts stopped: the session of Cabin expired\. Sign in again/) },
      ]);
      // Said once the refusal is on record in Cabin's session.json.
      await waitFor(() => logged(platform, '[Cabin] The doorbell service no longer accepts this session'), 'the advice');
      expect(relay().subscriberCount(topic)).toBe(1);

      const [front] = HOME.doorbells;
      await testbed.sim.deliverMotion(front.deviceId);
      await waitFor(() => sensorValue(platform.test, front.deviceId, 'MotionDetected') === true, "Home's motion");
      const status = await testbed.statusWhere('Cabin expired', (written) => written.accounts?.[1]?.session === 'expired');
      expect(status.accounts?.[0]?.session).toBe('signed-in');
      expect(status.doorbells.filter(({ fault: reason }) => reason !== null).map(({ deviceId }) => deviceId)).toEqual(CABIN.doorbells.map(({ deviceId }) => deviceId));
    });
  });

  it("leaves the other account's files and doorbells alone when one signs out on the settings page", async () => {
    const platform = launchAccounts([HOME, CABIN]);
    await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, CABIN])), 'every account subscribed');
    const log = createTestLogger('UI');

    await new SessionStore(openAccountFolder(testbed.storagePath, keyOf(CABIN), log), log).removeSession();

    await waitFor(() => fault(platform, CABIN.doorbells).every((value) => value === 1), "Cabin's doorbells faulted");
    expect(platform.log.lines).toContainEqual({ level: 'warn', message: "[Cabin] Signed out on the settings page: this account's doorbells show a fault until you sign in again; the other accounts' go on." });
    expect(fault(platform, HOME.doorbells)).toEqual([0, 0]);
    expect(await readdir(accountFolderPath(testbed.storagePath, keyOf(HOME)))).toContain('session.json');
    const [, back] = HOME.doorbells;
    await testbed.sim.deliverMotion(back.deviceId);
    await waitFor(() => sensorValue(platform.test, back.deviceId, 'MotionDetected') === true, "Home's motion");
    expect(logged(platform, '[Home] Signed out')).toBe(false);
  });

  it("keeps the doorbells of an account left out published, with a fault, while the others' work", async () => {
    const first = launchAccounts([HOME, CABIN, BARN]);
    await waitFor(() => allConfirmed(first, doorbellsOf([HOME, CABIN, BARN])), 'every account subscribed');
    await testbed.stop(first);

    // The same label as the first, in another case: Cabin is left out, named.
    const block = accountsBlock([HOME, { ...CABIN, label: 'HOME' }, BARN]);
    const platform = testbed.launch({ block, cached: first.test.registered });

    await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, BARN])), 'Home and Barn subscribed');
    expect(fault(platform, CABIN.doorbells)).toEqual([1, 1]);
    expect(platform.log.lines).toContainEqual({ level: 'error', message: expect.stringMatching(/^Configuration: accounts\[1\]\.label repeats accounts\[0\]\.label/) });
    expect(testbed.sim.requestsOf(BARN.email).filter(({ route }) => route === 'subscribe')).toHaveLength(2);
  });

  it('serves a doorbell listed in two accounts by the first only', async () => {
    const [front] = HOME.doorbells;
    addToSimulator([HOME, CABIN], { [CABIN.email]: [front.deviceId] });
    const platform = testbed.launch({ block: accountsBlock([HOME, CABIN], undefined, (account) => (account === CABIN ? [front, ...CABIN.doorbells] : account.doorbells)) });

    await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, CABIN])), 'every account subscribed');

    expect(subscribedBy(CABIN).sort()).toEqual(['2000001', '2000002']);
    expect(subscribedBy(HOME)).toContain(front.deviceId);
    expect(platform.log.lines).toContainEqual({ level: 'warn', message: expect.stringContaining('accounts[1].doorbells[0].deviceId repeats accounts[0].doorbells[0].deviceId') });
    const deliveries = await testbed.sim.deliverMotionEach(front.deviceId);
    expect(deliveries.map(({ account }) => account)).toEqual([HOME.email]);
    await waitFor(() => sensorValue(platform.test, front.deviceId, 'MotionDetected') === true, 'the motion');
  });

  it('moves the session of a config without accounts into the account that is the same, so the relaunch signs in no one again', async () => {
    const first = testbed.launch();
    await testbed.untilLaunchDone(first);
    await testbed.stop(first);
    expect(testbed.sim.requestsOf(HOME.email).filter(({ route }) => route === 'login')).toHaveLength(1);

    const platform = launchAccounts([HOME, CABIN]);

    await waitFor(() => allConfirmed(platform, doorbellsOf([HOME, CABIN])), 'every account subscribed');
    expect(testbed.sim.requestsOf(HOME.email).filter(({ route }) => route === 'login')).toHaveLength(1);
    expect(testbed.sim.requestsOf(CABIN.email).filter(({ route }) => route === 'login')).toHaveLength(1);
    expect(platform.log.lines).toContainEqual({ level: 'info', message: expect.stringMatching(/^\[Home\] Moved the session into the account's own folder/) });
    expect(platform.log.lines.filter(({ message }) => message.includes('Moved the session'))).toHaveLength(1);
    expect(await readdir(dataFolderPath(testbed.storagePath))).not.toContain('session.json');
    expect((await readdir(accountFolderPath(testbed.storagePath, keyOf(HOME)))).sort()).toEqual(['installation.json', 'session.json']);
  });
});
