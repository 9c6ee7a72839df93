/**
 * The doorbell list read between the connection's runs, over real HTTP against the simulator on a
 * fake clock (the production schedule's 15 minutes; sockets and files in real time): once the first
 * run is over, every 15 minutes and after each refresh; a 401 is the session's end, found within the
 * 15 minutes, and nothing is read until the next session; a service without the list is not asked
 * again; any other failure faults nothing and is read again at the next turn; and the read shares
 * the 8 slots of the runs, so the service never sees more than 8 requests at once.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordedRequest, Simulator } from '../../simulator/types.js';
import { Connection } from '../../src/connection/connection.js';
import type { PushEndpoint } from '../../src/connection/connection.js';
import type { SessionLoss } from '../../src/connection/progress.js';
import type { ScheduleTiming } from '../../src/connection/schedule.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { advice } from '../../src/session/advice.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore, type StoredSession } from '../../src/session/session-store.js';
import { signInWithCode } from '../../src/session/sign-in.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';
import { useSimulator } from '../support/each-test.js';
import { runUntil } from '../support/fake-clock.js';

const MINUTE = 60_000;
const EMAIL = 'you@example.com';
const CODE = '135790';

/** The production schedule, its jitter at the top of its range; the refresh comes 20 minutes after a run, between two reads. */
const TIMING: ScheduleTiming = { retry: { firstMs: 2 * MINUTE, factor: 2, maxMs: 60 * MINUTE, jitter: true }, refreshMs: 20 * MINUTE, listReadMs: 15 * MINUTE, random: () => 1 };

/** Retries within a call a millisecond apart: the fake clock is moved a millisecond a turn while a call runs. */
const QUICK_RETRIES = { backoff: { firstMs: 1, factor: 2, maxMs: 4, jitter: true }, wait: async () => undefined };

const FRONT_DOOR = [{ deviceId: '1234567', name: 'Front Door' }];

/** How long a check that nothing happened waits for what would have happened: a loopback request takes milliseconds. */
const QUIET_MS = 150;

interface Running {
  connection: Connection;
  log: TestLogger;
  /** Every fault the connection put on a doorbell, and every session lost. */
  faults: string[];
  subscribed: Set<string>;
}

function useConnectionTestbed(sim: () => Simulator) {
  let storagePath = '';
  let running: Running | undefined;
  beforeEach(async () => {
    storagePath = await mkdtemp(join(tmpdir(), 'list-read-'));
  });
  afterEach(async () => {
    running?.connection.stop();
    running = undefined;
    jest.useRealTimers();
    await rm(storagePath, { recursive: true, force: true });
  });
  const account = () => ({ serverUrl: sim().accountUrl, email: EMAIL, country: 'US', countryCode: '1', majorVersion: 1, minorVersion: 0 });
  const store = (log: TestLogger) => new SessionStore(openDataFolder(storagePath, log), log);
  return {
    /** Signs in as the settings page does: session.json holds the session the connection finds. */
    signIn(code = CODE): Promise<StoredSession> {
      const log = createTestLogger('UI');
      return signInWithCode(account(), code, { store: store(log), log: new SecretMaskingLogger(log) });
    },
    /** Starts a connection on the fake clock, with the stored session or `doorbellAccessToken`. */
    start(options: { doorbellAccessToken?: string; doorbells?: ReadonlyArray<{ deviceId: string; name: string }>; timing?: ScheduleTiming; timeoutMs?: number } = {}): Running {
      jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
      const log = createTestLogger();
      const faults: string[] = [];
      const subscribed = new Set<string>();
      const endpoint: PushEndpoint = { description: 'the fake endpoint', open: async () => `${sim().doorbellUrl}/push-token`, suspend: async () => undefined };
      const credentials = options.doorbellAccessToken === undefined ? { account: account() } : { doorbellAccessToken: options.doorbellAccessToken };
      const connection = new Connection({
        settings: { credentials, doorbellServerUrl: sim().doorbellUrl, doorbells: options.doorbells ?? FRONT_DOOR, registration: { service: 'webhook', os: 'linux', dictVersion: '2.0.0' } },
        store: store(log),
        log: new SecretMaskingLogger(log),
        endpoint,
        listener: {
          subscribed: (deviceId) => subscribed.add(deviceId),
          subscriptionFailed: (deviceId) => faults.push(`subscription of ${deviceId}`),
          sessionUnavailable: (why: SessionLoss) => faults.push(`session ${why}`),
        },
        timing: options.timing ?? TIMING,
        retry: QUICK_RETRIES,
        timeoutMs: options.timeoutMs,
      });
      running = { connection, log, faults, subscribed };
      connection.start();
      return running;
    },
  };
}

const reads = (sim: Simulator): RecordedRequest[] => sim.requestsTo('devices');

describe('the doorbell list read', () => {
  const sim = useSimulator({ accounts: [{ email: EMAIL, code: CODE }], doorbells: FRONT_DOOR.map(({ deviceId }) => deviceId) });
  const testbed = useConnectionTestbed(sim);

  /** Moves the fake clock to `minutes` after `from`, and waits until `count` reads have been answered. */
  async function readsBy(from: number, minutes: number, count: number): Promise<void> {
    await jest.advanceTimersByTimeAsync(from + minutes * MINUTE - jest.now());
    await runUntil(() => reads(sim()).filter(({ status }) => status !== 0).length >= count, `read ${count}, ${minutes} minutes on`, 0);
  }

  it('reads once the first run is over, then every 15 minutes and after each refresh, never before it is due', async () => {
    await testbed.signIn();
    const { subscribed } = testbed.start();
    await runUntil(() => reads(sim()).length === 1, 'the read after the first run', 0);
    const launchedAt = jest.now();

    // The run is not held up by the read: every request of the run came before it.
    const routes = sim().requests.map(({ route }) => route);
    expect(routes).toEqual(['region', 'login', 'register', 'subscribe', 'devices']);
    expect(subscribed.has('1234567')).toBe(true);

    await jest.advanceTimersByTimeAsync(15 * MINUTE - 1);
    await sleep(QUIET_MS);
    expect(reads(sim())).toHaveLength(1);
    await readsBy(launchedAt, 15, 2);
    // The refresh at 20 minutes is followed by a read, and the next read is 15 minutes after that one.
    await readsBy(launchedAt, 20, 3);
    expect(sim().requestsTo('register')).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(launchedAt + 35 * MINUTE - 1 - jest.now());
    await sleep(QUIET_MS);
    expect(reads(sim())).toHaveLength(3);
    await readsBy(launchedAt, 35, 4);

    expect(reads(sim()).map(({ status }) => status)).toEqual([200, 200, 200, 200]);
    expect(sim().invalidRequests()).toEqual([]);
  });

  it('finds a session the service no longer accepts within 15 minutes, says to sign in again, and reads nothing until the next session', async () => {
    await testbed.signIn();
    const { connection, faults, log } = testbed.start();
    await runUntil(() => reads(sim()).length === 1, 'the read after the first run', 0);
    const launchedAt = jest.now();
    sim().revokeToken(sim().issuedTokens[0]);

    await readsBy(launchedAt, 15, 2);
    await runUntil(() => faults.length > 0, 'the session to be given up', 0);

    expect(reads(sim()).map(({ status }) => status)).toEqual([200, 401]);
    expect(faults).toEqual(['session expired']);
    await runUntil(() => log.lines.some(({ message }) => message === advice.sessionRejected), 'the advice', 0);
    expect(log.lines.filter(({ level }) => level === 'error').map(({ message }) => message)).toEqual([advice.sessionRejected]);

    // Paused: neither a read nor a run for hours.
    const requests = sim().requests.length;
    await jest.advanceTimersByTimeAsync(3 * 60 * MINUTE);
    await sleep(QUIET_MS);
    expect(sim().requests).toHaveLength(requests);

    // The next session, signed in on the settings page: a run, the read after it, and the reads every 15 minutes again.
    sim().addAccount({ email: EMAIL, code: '246802' });
    let session: StoredSession | undefined;
    void testbed.signIn('246802').then((signedIn) => (session = signedIn));
    await runUntil(() => session !== undefined, 'the new sign-in');
    connection.followSessionFile(session);
    await runUntil(() => reads(sim()).length === 3, 'the read after the new session\'s run', 0);
    const resumedAt = jest.now();
    expect(sim().requests.slice(requests).map(({ route }) => route)).toEqual(['region', 'login', 'register', 'subscribe', 'devices']);
    await readsBy(resumedAt, 15, 4);
    expect(reads(sim()).map(({ status }) => status)).toEqual([200, 401, 200, 200]);
  });
});

describe('the doorbell list read, when it fails', () => {
  const sim = useSimulator({ accounts: [{ email: EMAIL, code: CODE }], doorbells: FRONT_DOOR.map(({ deviceId }) => deviceId) });
  const testbed = useConnectionTestbed(sim);

  it('takes a 401 with doorbellAccessToken for the token refused', async () => {
    await testbed.signIn();
    sim().setDeviceListMode('unauthorized');
    const { faults, log } = testbed.start({ doorbellAccessToken: sim().issuedTokens[0] });
    await runUntil(() => faults.length > 0, 'the token to be given up', 0);

    expect(faults).toEqual(['token-refused'].map((why) => `session ${why}`));
    expect(log.lines.filter(({ level }) => level === 'error').map(({ message }) => message)).toEqual([advice.tokenRejected]);
  });

  it.each([
    ['404', (simulator: Simulator) => simulator.setDeviceListMode('not-offered')],
    ['405', (simulator: Simulator) => simulator.injectFault('devices', { status: 405, times: 1_000 })],
  ])('stops reading for the run at a %s, with one info line and no fault', async (_status, refuse) => {
    await testbed.signIn();
    refuse(sim());
    const { faults, log, subscribed } = testbed.start({ timing: { ...TIMING, refreshMs: 12 * 60 * MINUTE } });
    await runUntil(() => reads(sim()).length === 1 && log.lines.some(({ message }) => message.includes('does not offer the doorbell list')), 'the refused read', 0);

    await jest.advanceTimersByTimeAsync(60 * MINUTE);
    await sleep(QUIET_MS);

    expect(reads(sim())).toHaveLength(1);
    expect(sim().requestsTo('register')).toHaveLength(1);
    expect(log.lines.filter(({ message }) => message.includes('doorbell list'))).toEqual([
      { level: 'info', message: 'The doorbell service does not offer the doorbell list: an expired session is noticed at the next refresh instead.' },
    ]);
    expect(faults).toEqual([]);
    expect(subscribed.has('1234567')).toBe(true);
  });

  it.each([
    ['an HTTP 500', { status: 500 }],
    ['no answer in time', { delayMs: 5_000 }],
  ])('faults nothing after %s, and reads again at the next turn', async (_what, fault) => {
    await testbed.signIn();
    // Every attempt of the first read's call: the first and its 4 retries.
    sim().injectFault('devices', { ...fault, times: 5 });
    const { faults, log, subscribed } = testbed.start({ timeoutMs: 300 });
    await runUntil(() => log.lines.some(({ message }) => message.startsWith('Could not read the doorbell list')), 'the failed read');
    const failedAt = jest.now();

    expect(reads(sim())).toHaveLength(5);
    expect(faults).toEqual([]);
    expect(subscribed.has('1234567')).toBe(true);
    expect(log.lines.filter(({ message }) => message.startsWith('Could not read the doorbell list')).map(({ level }) => level)).toEqual(['debug']);

    await jest.advanceTimersByTimeAsync(failedAt + 15 * MINUTE - jest.now());
    await runUntil(() => reads(sim()).some(({ status }) => status === 200), 'the next read', 0);
    expect(faults).toEqual([]);
  });
});

describe('the requests in flight', () => {
  /** Twenty doorbells, each request answered 30 ms after it arrived: a run's subscriptions fill every slot. */
  const DOORBELLS = Array.from({ length: 20 }, (_, index) => ({ deviceId: String(3001 + index), name: `Door ${index + 1}` }));
  let peak = 0;
  /** For each subscription answered, how many list reads were in flight then. */
  const besideReads: number[] = [];
  const sim: () => Simulator = useSimulator({
    accounts: [{ email: EMAIL, code: CODE }],
    doorbells: DOORBELLS.map(({ deviceId }) => deviceId),
    latencyMs: 30,
    // Requests in flight fall only when one is answered: just before an answer is the peak.
    onRequest: (answered) => {
      const pending = sim().requests.filter(({ status }) => status === 0);
      peak = Math.max(peak, pending.length + 1);
      if (answered.route === 'subscribe') {
        besideReads.push(pending.filter(({ route }) => route === 'devices').length);
      }
    },
  });
  const testbed = useConnectionTestbed(sim);

  it('are never more than 8, the list read and a refresh due at once included', async () => {
    await testbed.signIn();
    // The refresh and a read fall due at the same moment, 15 minutes after the first run.
    const { subscribed } = testbed.start({ doorbells: DOORBELLS, timing: { ...TIMING, refreshMs: 15 * MINUTE } });
    await runUntil(() => reads(sim()).length === 1 && reads(sim())[0].status !== 0, 'the read after the first run', 0);
    // The read at the refresh is slow: it holds its slot while the subscriptions go.
    sim().injectFault('devices', { delayMs: 300 });
    peak = 0;
    besideReads.length = 0;

    await jest.advanceTimersByTimeAsync(15 * MINUTE);
    await runUntil(() => sim().requestsTo('subscribe').length === 2 * DOORBELLS.length && reads(sim()).every(({ status }) => status !== 0), 'the refresh', 0);

    expect(subscribed.size).toBe(DOORBELLS.length);
    // The read and the refresh's subscriptions were in flight together.
    expect(Math.max(...besideReads)).toBe(1);
    expect(peak).toBe(8);
  });
});
