import { beforeEach, expect } from '@jest/globals';
import type { SimulatedAccount, SimulatorOptions } from '../../simulator/types.js';
import { AccountClient, type AccountClientOptions, type LoginParams } from '../../src/cloud/account.js';
import { DoorbellClient, type PushRegistration } from '../../src/cloud/doorbell.js';
import { CloudError, type CloudErrorKind } from '../../src/cloud/errors.js';
import type { RetryPolicy } from '../../src/cloud/retry-policy.js';
import { useSimulator as useFreshSimulator } from '../support/each-test.js';

/** An e-mail whose '+' and '@' must be percent-encoded, and a code whose leading zero must survive. */
export const ACCOUNT: Required<SimulatedAccount> = {
  email: 'first.last+doorbell@example.com',
  code: '012345',
  country: 'US',
  countryCode: '1',
};

export const CLIENT_ID = 'client-7f3a9c';

/** Above 2^53: a JS number would turn it into ...808. */
export const LARGEST_DEVICE_ID = '9223372036854775807';

/** A documentation address (RFC 5737): never loopback, never contacted. */
export const NON_LOOPBACK_HTTP = 'http://192.0.2.10:8080';

export const REGISTRATION: PushRegistration = {
  token: 'http://127.0.0.1:47850/push/receiver-secret-f00d',
  service: 'webhook',
  os: 'linux',
  dictVersion: '2.0.0',
};

/**
 * The clients' test doubles: a logger that records every debug line the cloud layer writes, and
 * backoff in milliseconds with the waits between attempts recorded instead of waited, so tests stay
 * fast while still showing how long each retry waited (the backoff, or a longer Retry-After).
 */
function doubles() {
  const lines: string[] = [];
  const waits: number[] = [];
  const policy: Partial<RetryPolicy> = {
    backoff: { firstMs: 1, factor: 2, maxMs: 4, jitter: true },
    wait: async (ms) => {
      waits.push(ms);
    },
  };
  return { logger: { lines, debug: (message: string) => lines.push(message) }, retry: { waits, policy } };
}

/** A fresh simulator for every test, closed after it, and fresh test doubles for the clients. */
export function useSimulator(options: SimulatorOptions = {}) {
  const simulator = useFreshSimulator({ accounts: [ACCOUNT], ...options });
  const context = {
    get sim() {
      return simulator();
    },
    ...doubles(),
  };
  beforeEach(() => {
    Object.assign(context, doubles());
  });
  return context;
}

export type TestContext = ReturnType<typeof useSimulator>;

export function accountClient(context: TestContext, overrides: Partial<AccountClientOptions> = {}): AccountClient {
  return new AccountClient({
    serverUrl: context.sim.accountUrl,
    clientId: CLIENT_ID,
    logger: context.logger,
    retry: context.retry.policy,
    ...overrides,
  });
}

export function loginParams(regionUrl: string): LoginParams {
  return { regionUrl, email: ACCOUNT.email, code: ACCOUNT.code, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode, majorVersion: 14, minorVersion: 0 };
}

/** Signs in through the real account client; returns the session token the simulator issued. */
export async function signIn(context: TestContext): Promise<string> {
  const login = await accountClient(context).loginWithCode(loginParams(context.sim.regionUrl));
  return login.token;
}

export function doorbellClient(context: TestContext, accessToken: string, serverUrl = context.sim.doorbellUrl): DoorbellClient {
  return new DoorbellClient({ serverUrl, accessToken, logger: context.logger, retry: context.retry.policy });
}

/** The service takes motion subscriptions only from a client registered for push. */
export async function registeredDoorbellClient(context: TestContext): Promise<DoorbellClient> {
  const client = doorbellClient(context, await signIn(context));
  await client.registerPushDevice(REGISTRATION);
  return client;
}

/** The rejection of `promise`, which must be a CloudError of `kind`. */
export async function cloudFailure(promise: Promise<unknown>, kind: CloudErrorKind): Promise<CloudError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(CloudError);
  expect((error as CloudError).kind).toBe(kind);
  return error as CloudError;
}

/** One debug line per request: method, path without query, status or failure kind, and time. */
export const DEBUG_LINE = /^(GET|POST|PATCH) \/[^\s?]* ([1-5][0-9]{2}|network|timeout|aborted) [0-9]+ ms$/;
