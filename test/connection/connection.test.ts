/**
 * The connection's chain in isolation, with a fake push endpoint: what it does when shut down in the
 * middle of a pass.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '../../src/connection/connection.js';
import type { PushEndpoint } from '../../src/connection/push-endpoint.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { openDataFolder } from '../../src/session/data-folder.js';
import { SessionStore, type StoredSession } from '../../src/session/session-store.js';
import { createTestLogger } from '../support/homebridge-api.js';
import { delay } from '../support/platform-harness.js';

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
    const connection = new Connection({
      settings: {
        credentials: { account: ACCOUNT },
        doorbellServerUrl: 'http://127.0.0.1:9',
        doorbells: [{ deviceId: '1234567', name: 'Front Door' }],
        registration: { service: 'fcm', os: 'linux', dictVersion: '1' },
      },
      store,
      log,
      endpoint,
      listener: { subscribed: () => undefined, subscriptionFailed: () => undefined, sessionUnavailable: () => undefined },
      timing: { retry: { firstMs: 10_000, factor: 2, maxMs: 10_000, jitter: true }, refreshMs: 60_000 },
    });

    connection.start();
    await delay(100);

    expect(opened).toEqual([]);
  });
});
