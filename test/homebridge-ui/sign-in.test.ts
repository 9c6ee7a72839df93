/**
 * The settings page's account requests against the simulator over loopback HTTP, as the Homebridge
 * UI's plugin server runs them: the account state, signing in with a code, signing out.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import { startSimulator } from '../../simulator/index.js';
import { freeLoopbackPort } from '../../scripts/lib/homebridge-process.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { linesRevealing } from '../support/log-secrets.js';
import { useSimulator } from '../support/each-test.js';
import { answerOf, everythingSaid, failureOf, settingsErrorOf, useSettingsPage } from './settings-page.js';

const EMAIL = 'porch+light@example.com';
const CODE = '012345';
const WRONG_CODE = '999999';

describe('the settings page: account, sign-in and sign-out', () => {
  const sim = useSimulator({ accounts: [{ email: EMAIL, code: CODE }] });
  const page = useSettingsPage();

  function fields(overrides: Record<string, unknown> = {}) {
    return { serverUrl: `${sim().accountUrl}/`, email: EMAIL, country: 'US', countryCode: '1', code: CODE, ...overrides };
  }

  function signIn(overrides: Record<string, unknown> = {}) {
    return page().requests.signIn(fields(overrides));
  }

  it('answers signed-out before any sign-in', async () => {
    expect(await answerOf(page(), page().requests.account())).toEqual({ state: 'signed-out' });
  });

  it('signs in at the regional address, writes session.json and answers the account, never a token', async () => {
    const answer = await answerOf(page(), signIn());

    expect(answer).toEqual({ state: 'signed-in', email: EMAIL, nickname: 'porch+light', region: 'us', signedInAt: expect.any(String) });
    expect(Date.parse(answer.signedInAt as string)).toBeGreaterThan(Date.now() - 60_000);
    const session = JSON.parse(await readFile(join(page().storagePath, 'doorbell-motion', 'session.json'), 'utf8'));
    expect(session).toMatchObject({ email: EMAIL, accountServer: sim().accountUrl, login: { token: sim().issuedTokens[0] } });
    expect((await stat(join(page().storagePath, 'doorbell-motion', 'session.json'))).mode & 0o777).toBe(0o600);
    // The plugin finds it under the account as config.json holds it: the server address without its slash.
    await expect(page().store.findSession(EMAIL, sim().accountUrl)).resolves.toBeDefined();
    expect(await answerOf(page(), page().requests.account())).toEqual(answer);
    expect(sim().invalidRequests()).toEqual([]);
  });

  it('sends the version numbers of the configured account, or 14 and 0', async () => {
    page().block = { platform: 'DoorbellMotion', account: { majorVersion: 15, minorVersion: 2 } };
    await signIn();
    sim().addAccount({ email: EMAIL, code: '111111' });
    page().block = undefined;
    await signIn({ code: '111111' });

    const bodies = sim().requestsTo('login').map(({ body }) => new URLSearchParams(body));
    expect(bodies.map((body) => [body.get('majorVersion'), body.get('minorVersion')])).toEqual([
      ['15', '2'],
      ['14', '0'],
    ]);
  });

  it('answers expired once the doorbell service refused the session', async () => {
    await signIn();
    await page().store.markSessionInvalid((await page().store.readSession())!.login.token);

    expect(await answerOf(page(), page().requests.account())).toMatchObject({ state: 'expired', email: EMAIL });
  });

  it('signs out: session.json is gone and the answer says signed-out', async () => {
    await signIn();

    expect(await answerOf(page(), page().requests.signOut())).toEqual({ state: 'signed-out' });
    await expect(stat(join(page().storagePath, 'doorbell-motion', 'session.json'))).rejects.toThrow('ENOENT');
    expect(await answerOf(page(), page().requests.account())).toEqual({ state: 'signed-out' });
  });

  it('signs out whatever session.json holds: a file that is not a session is removed too', async () => {
    await signIn();
    const file = join(page().storagePath, 'doorbell-motion', 'session.json');
    await writeFile(file, '{"token": "half-written by hand');

    expect(await answerOf(page(), page().requests.signOut())).toEqual({ state: 'signed-out' });
    await expect(stat(file)).rejects.toThrow('ENOENT');
  });

  it('says what to do about a wrong code (2018) on this very page, and tells the page the code is spent', async () => {
    const error = await settingsErrorOf(page(), signIn({ code: WRONG_CODE }));

    expect(error.message).toBe(
      'Sign-in refused: the verification code is wrong or expired (service code 2018). ' +
        'Sign in again: request a new verification code in the doorbell app and sign in with it above.',
    );
    expect(error.details).toEqual({ codeSpent: true });
    await expect(page().store.isCodeSpent(WRONG_CODE)).resolves.toBe(true);
    expect(await page().requests.account()).toEqual({ state: 'signed-out' });
  });

  it('says to wait after too many attempts (9002)', async () => {
    sim().injectFault('login', { serviceCode: 9002, msg: 'too many' });

    expect(await failureOf(page(), signIn())).toContain('too many attempts (service code 9002). Wait a while');
  });

  it('never sends a spent code again, saying so', async () => {
    await signIn();
    await page().requests.signOut();
    sim().addAccount({ email: EMAIL, code: CODE });

    const error = await settingsErrorOf(page(), signIn());
    expect(error.message).toBe(
      'This verification code was already used, and a code is never sent twice: request a new verification code in the doorbell app and sign in with it above.',
    );
    expect(error.details).toEqual({ codeSpent: true });
    expect(sim().requestsTo('login')).toHaveLength(1);
  });

  it('says a sign-in with the code is under way while the plugin holds its claim, sends nothing, and keeps the code field', async () => {
    await page().store.claimCode(CODE);

    const error = await settingsErrorOf(page(), signIn());

    expect(error.message).toBe(
      'A sign-in with this verification code is already under way, and a code is never sent twice at once. ' +
        'If that sign-in was cut off (the settings page closed, or Homebridge restarted), the code can be used again 15 minutes after it began; ' +
        'or request a new verification code in the doorbell app and sign in with it above.',
    );
    expect(error.details).toEqual({ codeSpent: false });
    expect(sim().requests).toEqual([]);
  });

  it('names the account server it could not reach, and keeps the code', async () => {
    const closed = `http://127.0.0.1:${await freeLoopbackPort()}`;

    const error = await settingsErrorOf(page(), signIn({ serverUrl: closed }));

    expect(error.message).toBe(`Could not reach the account service at ${closed}: check the address and the network. The code was not used up: you can sign in with it again.`);
    expect(error.details).toEqual({ codeSpent: false });
    await expect(page().store.isCodeSpent(CODE)).resolves.toBe(false);
  });

  it('says the service is busy after 503s, and keeps the code', async () => {
    sim().injectFault('login', { status: 503, times: 5 });

    const message = await failureOf(page(), signIn());

    expect(message).toMatch(/^The account service's regional address is not available \(HTTP 503 Service Unavailable\): try again later\./);
    await expect(page().store.isCodeSpent(CODE)).resolves.toBe(false);
  });

  it('asks a busy service again after 0.5 to 1 s, then after 1 to 2 s, with its own retry policy', async () => {
    // The waits the page's own policy hands out are recorded, not timed: a gap between two answers
    // would also count how fast they came, which depends on the machine. Only the wait is replaced;
    // the retries and backoff stay the page's.
    const waits: number[] = [];
    const logins: string[] = [];
    const busy = await startSimulator({
      accounts: [{ email: EMAIL, code: CODE }],
      onRequest: (request) => request.route === 'login' && logins.push(`login after ${waits.length} waits`),
    });
    try {
      busy.injectFault('login', { status: 503, times: 2 });
      const requests = new SettingsRequests({
        storagePath: page().storagePath,
        readPlatformBlock: async () => undefined,
        log: createTestLogger(),
        retry: { wait: async (ms) => void waits.push(ms) },
      });

      await requests.signIn(fields({ serverUrl: busy.accountUrl }));

      // Each login asked again only after its wait.
      expect(logins).toEqual(['login after 0 waits', 'login after 1 waits', 'login after 2 waits']);
      expect(waits).toHaveLength(2);
      expect(waits[0]).toBeGreaterThanOrEqual(500);
      expect(waits[0]).toBeLessThanOrEqual(1_000);
      expect(waits[1]).toBeGreaterThanOrEqual(1_000);
      expect(waits[1]).toBeLessThanOrEqual(2_000);
    } finally {
      await busy.close();
    }
  });

  it('refuses a regional address that is plain http, without sending the code', async () => {
    const insecure = await startSimulator({ accounts: [{ email: EMAIL, code: CODE }], regionUrlOverride: 'http://192.0.2.10:8080' });
    try {
      const message = await failureOf(page(), signIn({ serverUrl: insecure.accountUrl }));

      expect(message).toMatch(/^Sign-in stopped: the verification code is only sent over https, and .*http:\/\/192\.0\.2\.10:8080; use an https:\/\/ address/);
      expect(insecure.requestsTo('login')).toHaveLength(0);
      await expect(page().store.isCodeSpent(CODE)).resolves.toBe(false);
    } finally {
      await insecure.close();
    }
  });

  it('checks the fields by the rules of config.json before sending anything, naming each by its label', async () => {
    const { message, details } = await settingsErrorOf(
      page(),
      signIn({ serverUrl: 'http://account.example.com', email: 'porch at example.com', country: 'us', countryCode: '+1', code: '12345' }),
    );

    // Never sent, the code is not spent: the page keeps it for a second try.
    expect(details).toEqual({});
    expect(message).toBe(
      'Not signed in: Account server must be an https:// address (http:// only for localhost), with a port from 1 to 65535 if it has one. ' +
        'E-mail must be an e-mail address, like you@example.com. Country must be 2 capital letters, like US. ' +
        'Country calling code must be 1 to 4 digits, like 1 or 49. Verification code must be the 6 digits the doorbell app shows.',
    );
    expect(await failureOf(page(), page().requests.signIn({ email: EMAIL }))).toBe(
      'Not signed in: Account server is required. Country is required. Country calling code is required. Verification code is required.',
    );
    expect(sim().requests).toEqual([]);
  });

  it.each(['https://account.example.com:99999', 'https://[1::2::3]', 'https://account.example.com:0'])(
    'names an account server %s that no request could be sent to, and sends nothing',
    async (serverUrl) => {
      expect(await failureOf(page(), signIn({ serverUrl }))).toBe(
        'Not signed in: Account server must be an https:// address (http:// only for localhost), with a port from 1 to 65535 if it has one.',
      );
      expect(sim().requests).toEqual([]);
      await expect(page().store.isCodeSpent(CODE)).resolves.toBe(false);
    },
  );

  it('reads back the account fields config.json holds, never the code', async () => {
    expect(await answerOf(page(), page().requests.savedAccount())).toEqual({});

    page().block = { platform: 'DoorbellMotion', account: { ...fields(), majorVersion: 14 } };

    expect(await answerOf(page(), page().requests.savedAccount())).toEqual({ serverUrl: `${sim().accountUrl}/`, email: EMAIL, country: 'US', countryCode: '1' });
    expect(linesRevealing(everythingSaid(page()), [CODE])).toEqual([]);
  });

  it('never says or logs the code, a token or an rriot value, at any level', async () => {
    sim().injectFault('login', { status: 503 });
    await answerOf(page(), signIn());
    await failureOf(page(), signIn());
    await failureOf(page(), signIn({ code: WRONG_CODE }));

    expect(page().log.lines.length).toBeGreaterThan(0);
    expect(linesRevealing(everythingSaid(page()), [CODE, WRONG_CODE, ...sim().secrets])).toEqual([]);
  });
});
