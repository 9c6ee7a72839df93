/**
 * Signing in with a one-time code against the simulator, as the plugin and the settings page both do:
 * which failures only the user can fix (and what they are told), which may be retried with the same
 * code, and when a code counts as spent.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudError } from '../../src/cloud/errors.js';
import { SecretMaskingLogger } from '../../src/log.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { CodeUnderWayError, SignInError, signInWithCode, type SignInAccount } from '../../src/session/sign-in.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { useSimulator } from '../support/each-test.js';

const EMAIL = 'porch+light@example.com';
const CODE = '012345';
const FAST_RETRY = { backoff: { firstMs: 1, factor: 2, maxMs: 2, jitter: true }, wait: async () => undefined };

let storagePath: string;
let lines: TestLogger;
let store: SessionStore;

beforeEach(async () => {
  storagePath = await mkdtemp(join(tmpdir(), 'sign-in-'));
  lines = createTestLogger();
  store = new SessionStore(openDataFolder(storagePath, lines), lines);
});

afterEach(async () => {
  await rm(storagePath, { recursive: true, force: true });
});

describe('signInWithCode', () => {
  const sim = useSimulator({ accounts: [{ email: EMAIL, code: CODE }] });

  function account(overrides: Partial<SignInAccount> = {}): SignInAccount {
    return { serverUrl: sim().accountUrl, email: EMAIL, country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0, ...overrides };
  }

  function signIn(code = CODE, overrides: Partial<SignInAccount> = {}) {
    return signInWithCode(account(overrides), code, { store, log: new SecretMaskingLogger(lines), retry: FAST_RETRY });
  }

  async function failure(promise: Promise<unknown>): Promise<unknown> {
    return promise.then(
      () => {
        throw new Error('expected the sign-in to fail');
      },
      (error: unknown) => error,
    );
  }

  it('resolves the region, logs in there, saves the session and spends the code', async () => {
    const session = await signIn();

    expect(session).toMatchObject({ email: EMAIL, accountServer: sim().accountUrl, regionUrl: sim().regionUrl });
    expect(session.login.token).toBe(sim().issuedTokens[0]);
    await expect(store.findSession(EMAIL, sim().accountUrl)).resolves.toEqual(session);
    await expect(store.isCodeSpent(CODE)).resolves.toBe(true);
    expect(sim().invalidRequests()).toEqual([]);
  });

  it.each([
    [2018, 'the verification code is wrong or expired (service code 2018). Sign in again: request a new verification code'],
    [2008, 'there is no such account at this server (service code 2008). Check the e-mail address and the account server address.'],
    [3039, 'there is no such account at this server (service code 3039). Check the e-mail address'],
    [9002, 'too many attempts (service code 9002). Wait a while'],
    [3006, 'the agreement version is out of date (service code 3006). Raise account.majorVersion'],
    [1002, 'the service rejected a parameter (service code 1002). Check the e-mail address, the country and the country code.'],
    [4242, 'the service refused it (service code 4242). Check the account settings'],
  ])('turns service code %i at login into what to do, and spends the code', async (serviceCode, words) => {
    sim().injectFault('login', { serviceCode, msg: 'no' });

    const error = await failure(signIn());

    expect(error).toBeInstanceOf(SignInError);
    expect((error as SignInError).message).toMatch(/^Sign-in refused: /);
    expect((error as SignInError).message).toContain(words);
    expect((error as SignInError).cause).toBeInstanceOf(CloudError);
    await expect(store.isCodeSpent(CODE)).resolves.toBe(true);
    await expect(store.readSession()).resolves.toBeUndefined();
  });

  it('refuses an unknown account at the region call without sending or spending the code', async () => {
    const error = await failure(signIn(CODE, { email: 'nobody@example.com' }));

    expect(error).toBeInstanceOf(SignInError);
    expect((error as Error).message).toContain('service code 2008');
    expect(sim().requestsTo('login')).toHaveLength(0);
    await expect(store.isCodeSpent(CODE)).resolves.toBe(false);
  });

  it('sends a code once when the plugin and the settings page sign in with it at the same time', async () => {
    // Two processes on one data folder, as the plugin (account.code) and the settings page are.
    const otherStore = new SessionStore(openDataFolder(storagePath, lines), lines);
    const fromPage = signInWithCode(account(), CODE, { store: otherStore, log: new SecretMaskingLogger(lines), retry: FAST_RETRY });

    const outcomes = await Promise.allSettled([signIn(), fromPage]);

    expect(sim().requestsTo('login')).toHaveLength(1);
    expect(outcomes.map(({ status }) => status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    // Refused as under way while the other held its claim, or as used once the service had answered it.
    expect((refused?.reason as Error).message).toMatch(/^(A sign-in with this verification code is already under way|This verification code was already used)/);
  });

  it('refuses a code claimed by a sign-in under way elsewhere, as under way, without a request, and keeps the claim', async () => {
    const otherStore = new SessionStore(openDataFolder(storagePath, lines), lines);
    await otherStore.claimCode(CODE);

    const error = await failure(signIn());

    expect(error).toBeInstanceOf(CodeUnderWayError);
    expect(error).not.toBeInstanceOf(SignInError);
    expect((error as Error).message).toBe(
      'A sign-in with this verification code is already under way, and a code is never sent twice at once. ' +
        'If that sign-in was cut off (the settings page closed, or Homebridge restarted), the code can be used again 15 minutes after it began; ' +
        "or request a new verification code in the doorbell app and sign in with it on the plugin's settings page in the Homebridge UI " +
        '(without the UI: put it in account.code and restart Homebridge).',
    );
    expect(sim().requests).toEqual([]);
    await expect(store.codeState(CODE)).resolves.toBe('under-way');
  });

  it('holds the claim while the login is on its way, and spends the code once the service answered', async () => {
    sim().injectFault('login', { delayMs: 300 });
    const signingIn = signIn();
    await pollUntil(() => sim().requestsTo('login').length, (count) => count === 1, 10_000, 'the login request');

    await expect(store.codeState(CODE)).resolves.toBe('under-way');
    await signingIn;
    await expect(store.codeState(CODE)).resolves.toBe('spent');
  });

  it('gives the code back when the sign-in is called off during the region call', async () => {
    sim().injectFault('region', { delayMs: 5_000 });
    const abort = new AbortController();
    const signingIn = signInWithCode(account(), CODE, { store, log: new SecretMaskingLogger(lines), retry: FAST_RETRY, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);

    await expect(signingIn).rejects.toThrow();

    expect(sim().requestsTo('login')).toHaveLength(0);
    await expect(store.codeState(CODE)).resolves.toBe('unused');
  });

  it('never sends a spent code again, saying so', async () => {
    await signIn();
    sim().addAccount({ email: EMAIL, code: CODE });

    const error = await failure(signIn());

    expect(error).toBeInstanceOf(SignInError);
    expect((error as Error).message).toContain('already used, and a code is never sent twice');
    expect(sim().requestsTo('login')).toHaveLength(1);
  });

  it('keeps the code for another try after an answer that is not the service\'s, and that try succeeds', async () => {
    sim().injectFault('login', { rawBody: '<html>proxy error</html>', contentType: 'text/html' });

    const error = await failure(signIn());

    expect(error).toBeInstanceOf(CloudError);
    expect(error).not.toBeInstanceOf(SignInError);
    expect((error as CloudError).kind).toBe('malformed');
    await expect(store.isCodeSpent(CODE)).resolves.toBe(false);
    await expect(signIn()).resolves.toMatchObject({ email: EMAIL });
  });

  it('keeps the code when the region answer is malformed, and when the network fails', async () => {
    sim().injectFault('region', { rawBody: '<html>gateway timeout</html>', contentType: 'text/html' });
    await expect(failure(signIn())).resolves.toMatchObject({ kind: 'malformed' });
    sim().injectFault('login', { reset: true, times: 5 });
    await expect(failure(signIn())).resolves.toMatchObject({ kind: 'network' });

    await expect(store.codeState(CODE)).resolves.toBe('unused');
  });

  it('refuses a regional address that is not https, without sending the code, as only the user can fix', async () => {
    const insecure = useSimulatorWithRegion('http://192.0.2.10:8080');
    const error = await failure(
      signInWithCode(account({ serverUrl: (await insecure).accountUrl }), CODE, { store, log: new SecretMaskingLogger(lines), retry: FAST_RETRY }),
    );
    await (await insecure).close();

    expect(error).toBeInstanceOf(SignInError);
    expect((error as Error).message).toMatch(/^Sign-in stopped: the verification code is only sent over https, and .*http:\/\/192\.0\.2\.10:8080/);
    await expect(store.isCodeSpent(CODE)).resolves.toBe(false);
  });

  it('masks the code and the session secrets in every line it logs', async () => {
    sim().injectFault('login', { status: 503 });
    const session = await signIn();

    const secrets = [CODE, session.login.token, ...sim().secrets];
    expect(lines.lines.length).toBeGreaterThan(0);
    expect(lines.lines.filter((line) => secrets.some((secret) => line.message.includes(secret)))).toEqual([]);
  });
});

async function useSimulatorWithRegion(regionUrlOverride: string) {
  const { startSimulator } = await import('../../simulator/index.js');
  return startSimulator({ accounts: [{ email: EMAIL, code: CODE }], regionUrlOverride });
}
