/**
 * The connection's chain in isolation, with a fake push endpoint: what it does when shut down in the
 * middle of an attempt to connect, and when session.json is reported changed in the middle of its own sign-in.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, type ConnectionOptions, type ConnectionSettings } from '../../src/connection/connection.js';
import type { PushEndpoint } from '../../src/connection/connection.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore, type StoredSession } from '../../src/session/session-store.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { delay } from '../../scripts/lib/platform-harness.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { useSimulator } from '../support/each-test.js';

const ACCOUNT = { serverUrl: 'http://127.0.0.1:9', email: 'you@example.com', country: 'US', countryCode: '1', majorVersion: 1, minorVersion: 0 };

const SESSION: StoredSession = {
  accountServer: ACCOUNT.serverUrl,
  regionUrl: ACCOUNT.serverUrl,
  email: ACCOUNT.email,
  loggedInAt: '2026-11-22T10:00:00.000Z',
  codeHash: 'unused',
  login: { token: 'stored-session-token' },
};

let storagePath: string;

beforeEach(async () => {
  storagePath = await mkdtemp(join(tmpdir(), 'connection-'));
});

afterEach(async () => {
  await rm(storagePath, { recursive: true, force: true });
});


/** A connection for one doorbell, Front Door, whose background retries wait longer than any test. */
function frontDoorConnection({
  credentials,
  doorbellServerUrl,
  ...parts
}: Pick<ConnectionSettings, 'credentials' | 'doorbellServerUrl'> & Pick<ConnectionOptions, 'store' | 'log' | 'endpoint'>): Connection {
  return new Connection({
    settings: {
      credentials,
      doorbellServerUrl,
      doorbells: [{ deviceId: '1234567', name: 'Front Door' }],
      registration: { service: 'fcm', os: 'linux', dictVersion: '1' },
    },
    ...parts,
    listener: { subscribed: () => undefined, subscriptionFailed: () => undefined, sessionUnavailable: () => undefined },
    timing: { retry: { firstMs: 10_000, factor: 2, maxMs: 10_000, jitter: true }, refreshMs: 60_000, listReadMs: 60_000 },
  });
}

describe('Connection', () => {
  it('does not open the push endpoint once shut down during the sign-in', async () => {
    const log = new SecretMaskingLogger(createTestLogger());
    const opened: string[] = [];
    const endpoint: PushEndpoint = {
      description: 'the fake endpoint',
      open: async () => {
        opened.push('open');
        return 'http://127.0.0.1:9/push-token';
      },
      suspend: async () => undefined,
    };
    // Homebridge shuts down while the stored session is being read: the last await before the endpoint.
    const store: SessionStore = Object.assign(new SessionStore(openDataFolder(storagePath, log), log), {
      findSession: async () => {
        connection.stop();
        return SESSION;
      },
    });
    const connection = frontDoorConnection({ credentials: { account: ACCOUNT }, doorbellServerUrl: 'http://127.0.0.1:9', store, log, endpoint });

    connection.start();
    await delay(100);

    expect(opened).toEqual([]);
  });
});

describe('Connection signing in with account.code', () => {
  const CODE = '246810';
  const sim = useSimulator({ accounts: [{ email: ACCOUNT.email, code: CODE }], doorbells: ['1234567'] });

  /**
   * Signs in with account.code; the watcher's poll falls between saving the session and recording the
   * code as used (the one moment the file holds a session the connection has no token of yet) and
   * reports what `reported` makes of the saved session. Resolves with the log once subscribed.
   */
  async function signInReporting(reported: (saved: StoredSession | undefined) => StoredSession | undefined): Promise<string[]> {
    const lines = createTestLogger();
    const log = new SecretMaskingLogger(lines);
    const account = { ...ACCOUNT, serverUrl: sim().accountUrl, code: CODE };
    const realStore = new SessionStore(openDataFolder(storagePath, log), log);
    const store: SessionStore = Object.assign(realStore, {
      spendCode: async (code: string) => {
        connection.followSessionFile(reported(await realStore.readSession()));
        return SessionStore.prototype.spendCode.call(realStore, code);
      },
    });
    const endpoint: PushEndpoint = {
      description: 'the fake endpoint',
      open: async () => `${sim().doorbellUrl}/push-token`,
      suspend: async () => undefined,
    };
    const connection = frontDoorConnection({ credentials: { account }, doorbellServerUrl: sim().doorbellUrl, store, log, endpoint });

    connection.start();
    await pollUntil(() => sim().subscribedDoorbells.has('1234567'), Boolean, 10_000, 'the subscription');
    await delay(100);
    connection.stop();
    return lines.lines.map((line) => line.message);
  }

  it('takes the session its own sign-in saved for its own, even when the watcher reports it before the sign-in is over', async () => {
    const messages = await signInReporting((saved) => saved);

    expect(messages).not.toContainEqual(expect.stringContaining('settings page'));
    expect(messages.filter((message) => message.startsWith('Signed in as'))).toHaveLength(1);
    expect(sim().requestsTo('login')).toHaveLength(1);
    expect(sim().requestsTo('register')).toHaveLength(1);
  });

  it('follows a session of the same code but another token once its own sign-in is over', async () => {
    const messages = await signInReporting((saved) => saved && { ...saved, login: { token: 'the-page-token' } });

    const signedIn = messages.findIndex((message) => message === 'Signed in as you (you@example.com)');
    const followed = messages.findIndex((message) => message.startsWith('Signed in on the settings page'));
    expect(signedIn).toBeGreaterThanOrEqual(0);
    expect(followed).toBeGreaterThan(signedIn);
  });
});
