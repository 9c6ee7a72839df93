/**
 * The running platform follows session.json as the settings page in the Homebridge UI writes it, with
 * no restart: a sign-in registers and subscribes, a sign-out faults every doorbell and closes the relay
 * stream, and the platform's own writes change nothing. The other writer here is a second store on the same folder, as the UI's
 * plugin server is.
 */
import { describe, expect, it } from '@jest/globals';
import { startRelay } from '../simulator/relay/index.js';
import { SecretMaskingLogger } from '../src/log.js';
import { openDataFolder } from '../src/storage/data-folder.js';
import { SessionStore } from '../src/session/session-store.js';
import { signInWithCode } from '../src/session/sign-in.js';
import { createTestLogger } from '../scripts/lib/homebridge-api.js';
import { ACCOUNT, DOORBELLS, sensorValue, waitFor } from '../scripts/lib/platform-harness.js';
import type { RunningPlatform } from '../scripts/lib/platform-harness.js';
import { allConfirmed, logged, usePlatformTestbed } from './support/platform-testbed.js';

/** The plugin follows a sign-in or sign-out on the settings page within 5 s. */
const FOLLOW_MS = 5_000;

const allFaulted = ({ test }: RunningPlatform) => DOORBELLS.every(({ deviceId }) => sensorValue(test, deviceId, 'StatusFault') === 1);

describe('following the settings page', () => {
  const testbed = usePlatformTestbed();

  /** The UI's plugin server: its own store on the same data folder. */
  function settingsPage() {
    const log = createTestLogger('UI');
    const store = new SessionStore(openDataFolder(testbed.storagePath, log), log);
    const account = { serverUrl: testbed.sim.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };
    return {
      store,
      signIn: (code = ACCOUNT.code) => signInWithCode(account, code, { store, log: new SecretMaskingLogger(log) }),
    };
  }

  function launchWithoutCode(relayUrl?: string): RunningPlatform {
    return testbed.launch({ relayUrl, overrides: { account: { serverUrl: testbed.sim.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1' } } });
  }

  it('registers and subscribes within 5 s of a sign-in on the settings page, without a restart', async () => {
    const platform = launchWithoutCode();
    await waitFor(() => logged(platform, 'Not signed in as'), 'the sign-in hint');
    expect(allFaulted(platform)).toBe(true);
    // The normal first start: a warning that says what to do, not an error.
    expect(platform.log.lines.filter(({ message }) => message.includes('Not signed in as')).map(({ level }) => level)).toEqual(['warn']);

    await settingsPage().signIn();

    await waitFor(() => allConfirmed(platform), 'the subscriptions', FOLLOW_MS);
    expect(logged(platform, 'Signed in on the settings page')).toBe(true);
    expect(testbed.sim.requestsTo('login')).toHaveLength(1);
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
  });

  it('faults every doorbell within 5 s of a sign-out, and says so', async () => {
    const page = settingsPage();
    await page.signIn();
    const platform = launchWithoutCode();
    await waitFor(() => allConfirmed(platform), 'the subscriptions');
    // The doorbell list is read once the first run is over.
    await waitFor(() => testbed.sim.requestsTo('devices').length === 1, 'the doorbell list read');
    const requests = testbed.sim.requests.length;

    await page.store.removeSession();

    await waitFor(() => allFaulted(platform), 'the faults', FOLLOW_MS);
    expect(platform.log.lines).toContainEqual({ level: 'warn', message: 'Signed out on the settings page: every doorbell shows a fault until you sign in again.' });
    expect(testbed.sim.requests).toHaveLength(requests);
  });

  it('closes the relay stream on a sign-out, warns of no relay outage meanwhile, and opens it again with the next sign-in', async () => {
    const relay = await startRelay({ keepaliveMs: 200 });
    try {
      const page = settingsPage();
      await page.signIn();
      const platform = launchWithoutCode(relay.url);
      await waitFor(() => allConfirmed(platform), 'the subscriptions');
      const topic = new URL(testbed.sim.pushToken ?? 'http://x/').pathname.slice(1);
      expect(relay.subscriberCount(topic)).toBe(1);

      await page.store.removeSession();

      await waitFor(() => relay.subscriberCount(topic) === 0, 'the relay to see its subscriber go', FOLLOW_MS);
      // The relay goes down as well: nothing is subscribed, so that is no outage to warn of.
      relay.refuseSubscriptions({ status: 503, times: 1_000 });
      relay.dropStreams();
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(platform.log.lines.filter(({ message }) => message.startsWith('Push relay unreachable'))).toEqual([]);
      expect(relay.requests.filter(({ status }) => status === 503)).toEqual([]);
      relay.refuseSubscriptions({ status: 503, times: 0 });

      testbed.sim.addAccount({ email: ACCOUNT.email, code: '654321' });
      await page.signIn('654321');

      await waitFor(() => allConfirmed(platform), 'the subscriptions with the new session', FOLLOW_MS);
      expect(relay.subscriberCount(topic)).toBe(1);
      expect(testbed.sim.requestsTo('register')).toHaveLength(2);
    } finally {
      await relay.close();
    }
  });

  it('takes a new session after the old one was refused', async () => {
    testbed.sim.injectFault('subscribe', { status: 401 });
    const platform = testbed.launch();
    await waitFor(() => logged(platform, 'no longer accepts this session'), 'the refused session');
    testbed.sim.addAccount({ email: ACCOUNT.email, code: '654321' });

    await settingsPage().signIn('654321');

    await waitFor(() => allConfirmed(platform), 'the subscriptions with the new session', FOLLOW_MS);
  });

  it('changes nothing for its own writes: a sign-in with account.code is not followed again', async () => {
    const platform = testbed.launch();
    await waitFor(() => allConfirmed(platform), 'the subscriptions');
    await new Promise((resolve) => setTimeout(resolve, 800));

    expect(logged(platform, 'Signed in on the settings page')).toBe(false);
    expect(testbed.sim.requestsTo('register')).toHaveLength(1);
  });

  it('warns while a sign-in with its account.code is under way on the page, and signs in itself once that one gives the code back', async () => {
    const page = settingsPage();
    await page.store.claimCode(ACCOUNT.code);
    const platform = testbed.launch();
    await waitFor(() => logged(platform, 'Trying again in'), 'the retry');

    const underWay = platform.log.lines.filter((line) => line.message.includes('already under way'));
    expect(underWay.length).toBeGreaterThan(0);
    expect(underWay.every((line) => line.level === 'warn')).toBe(true);
    expect(testbed.sim.requestsTo('login')).toHaveLength(0);

    // The page's sign-in got no decision (the service did not answer): the code is free again.
    await page.store.releaseCode(ACCOUNT.code);

    await waitFor(() => allConfirmed(platform), 'the subscriptions');
    expect(testbed.sim.requestsTo('login')).toHaveLength(1);
  });

  it('keeps to its configured account when the page signs in with another, saying a restart is needed', async () => {
    const platform = launchWithoutCode();
    await waitFor(() => logged(platform, 'Not signed in as'), 'the sign-in hint');
    testbed.sim.addAccount({ email: 'someone.else@example.com', code: '111111' });
    const log = createTestLogger('UI');
    const store = new SessionStore(openDataFolder(testbed.storagePath, log), log);
    const other = { serverUrl: testbed.sim.accountUrl, email: 'someone.else@example.com', country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };

    await signInWithCode(other, '111111', { store, log: new SecretMaskingLogger(log) });

    await waitFor(() => logged(platform, 'restart Homebridge to use the new account'), 'the warning', FOLLOW_MS);
    expect(allFaulted(platform)).toBe(true);
    expect(testbed.sim.requestsTo('register')).toHaveLength(0);
  });
});
