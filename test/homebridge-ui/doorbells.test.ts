/**
 * The settings page's `/doorbells` against the simulator over loopback HTTP: the account's doorbells
 * with every digit of their ids, those in the saved settings marked, the session's token or the
 * configured access token, and what the page is told when the list cannot be had.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SAMPLE_DEVICES } from '../../simulator/index.js';
import { freeLoopbackPort } from '../../scripts/lib/homebridge-process.js';
import { linesRevealing } from '../support/log-secrets.js';
import { useSimulator } from '../support/each-test.js';
import { answerOf, everythingSaid, failureOf, useSettingsPage } from './settings-page.js';

const EMAIL = 'porch+light@example.com';
const CODE = '012345';

const NOT_OFFERED = "This doorbell service does not offer a list of the account's doorbells: type each doorbell's device id in the settings below.";

describe('the settings page: the account\'s doorbells', () => {
  const sim = useSimulator({ accounts: [{ email: EMAIL, code: CODE }], devices: [...SAMPLE_DEVICES] });
  const page = useSettingsPage();

  /** Front Door saved as a JSON integer, as config.json may hold it, and a doorbell the account does not list. */
  function savedBlock(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      platform: 'DoorbellMotion',
      name: 'Doorbell Motion',
      doorbellServerUrl: `${sim().doorbellUrl}/`,
      doorbells: [{ deviceId: 1234567, name: 'Front' }, { deviceId: '42' }],
      ...overrides,
    };
  }

  async function signedIn(overrides: Record<string, unknown> = {}): Promise<string> {
    await page().requests.signIn({ serverUrl: sim().accountUrl, email: EMAIL, country: 'US', countryCode: '1', code: CODE });
    page().block = savedBlock(overrides);
    return sim().issuedTokens.at(-1) as string;
  }

  it('lists the own, shared and camera doorbells with exact ids, never the chime, marking those already saved', async () => {
    const token = await signedIn();

    expect(await answerOf(page(), page().requests.doorbells())).toEqual({
      available: true,
      doorbells: [
        { deviceId: '1234567', name: 'Front Door', kind: 'lpd_v2', configured: true },
        { deviceId: '7654321', name: "Neighbour's Door", kind: 'doorbell_v3', configured: false },
        { deviceId: '9007199254740993', name: 'Garage', kind: 'stickup_cam_v4', configured: false },
      ],
    });
    const [request] = sim().requestsTo('devices');
    expect(request.headers.authorization).toBe(`Bearer ${token}`);
    expect(sim().invalidRequests()).toEqual([]);
    expect(page().log.lines.filter(({ level }) => level === 'warn').map(({ message }) => message)).toEqual([
      'The doorbell service listed 3 devices without a usable device id; the settings page leaves them out.',
    ]);
  });

  it('asks with the doorbell access token when the settings hold one, session or not', async () => {
    await signedIn();
    const accessToken = sim().issuedTokens[0] as string;
    await page().requests.signOut();
    page().block = savedBlock({ doorbellAccessToken: accessToken, doorbells: [{ deviceId: '9007199254740993' }] });

    const answer = await answerOf(page(), page().requests.doorbells());

    expect(answer.available && answer.doorbells.map(({ deviceId, configured }) => [deviceId, configured])).toEqual([
      ['1234567', false],
      ['7654321', false],
      ['9007199254740993', true],
    ]);
    expect(sim().requestsTo('devices')[0]?.headers.authorization).toBe(`Bearer ${accessToken}`);
  });

  it.each([
    ['404', () => sim().setDeviceListMode('not-offered')],
    ['405', () => sim().injectFault('devices', { status: 405 })],
  ])('says in one line that the service does not offer the list (%s)', async (_status, withoutList) => {
    await signedIn();
    withoutList();

    expect(await answerOf(page(), page().requests.doorbells())).toEqual({ available: false, reason: NOT_OFFERED });
  });

  it('turns a refused session (401) into the expired account state, recorded for /account too', async () => {
    await signedIn();
    sim().setDeviceListMode('unauthorized');

    expect(await answerOf(page(), page().requests.doorbells())).toEqual({
      available: false,
      reason: "The doorbell service no longer accepts this session: sign in again above to see the account's doorbells.",
      refused: true,
      account: { state: 'expired', email: EMAIL, nickname: 'porch+light', region: 'us', signedInAt: expect.any(String) },
    });
    expect(await answerOf(page(), page().requests.account())).toMatchObject({ state: 'expired' });
    expect(JSON.parse(await readFile(join(page().storagePath, 'doorbell-motion', 'session.json'), 'utf8'))).toHaveProperty('invalidatedAt');
    expect(await failureOf(page(), page().requests.doorbells())).toBe("The session has expired: sign in again above to see the account's doorbells.");
  });

  it('says the access token was refused (401) when it came from the settings, a refusal unlike a missing list, and leaves the session alone', async () => {
    await signedIn({ doorbellAccessToken: 'refused-token-SECRET' });

    expect(await answerOf(page(), page().requests.doorbells())).toEqual({
      available: false,
      reason: 'The doorbell service refused the Doorbell Access Token in the settings: replace it, save, and restart Homebridge.',
      refused: true,
    });
    expect((await page().store.readSession())?.invalidatedAt).toBeUndefined();
  });

  it('asks to sign in first, and for the doorbell service address', async () => {
    page().block = savedBlock();
    expect(await failureOf(page(), page().requests.doorbells())).toBe("Sign in above to see the account's doorbells.");

    await signedIn({ doorbellServerUrl: undefined });
    expect(await failureOf(page(), page().requests.doorbells())).toBe(
      "Enter the Doorbell Server address in the settings below and save: the account's doorbells are listed from there.",
    );
    expect(sim().requestsTo('devices')).toEqual([]);
  });

  it.each([
    ['nothing listens there', async () => `http://127.0.0.1:${await freeLoopbackPort()}`, 'could not be reached. Check the Doorbell Server address and the network.'],
    ['it is not https', async () => 'http://doorbell.example.com', 'the session is only sent over https, so the Doorbell Server address must start with https://'],
  ])('says in plain words when %s', async (_what, address, words) => {
    await signedIn({ doorbellServerUrl: await address() });

    const message = await failureOf(page(), page().requests.doorbells());

    expect(message).toContain("The account's doorbells could not be listed: ");
    expect(message).toContain(words);
  });

  it('says so when the service is down or answers something else or far too much, with no status number', async () => {
    await signedIn();
    sim().injectFault('devices', { status: 503, times: 10 });
    const down = await failureOf(page(), page().requests.doorbells());
    sim().clearFaults();
    sim().injectFault('devices', { rawBody: '<html>proxy</html>', contentType: 'text/html' });
    const other = await failureOf(page(), page().requests.doorbells());
    sim().clearFaults();
    sim().injectFault('devices', { rawBody: `{"doorbots":[],"padding":"${'x'.repeat(1024 * 1024)}"}` });
    const huge = await failureOf(page(), page().requests.doorbells());

    expect(down).toBe(`The account's doorbells could not be listed: the doorbell service at ${sim().doorbellUrl} is busy or down. Try again later.`);
    expect(other).toBe(`The account's doorbells could not be listed: the answer from ${sim().doorbellUrl} is not the doorbell service's. Check the Doorbell Server address.`);
    expect(huge).toBe(
      `The account's doorbells could not be listed: the answer from ${sim().doorbellUrl} was larger than any list of doorbells, so it was not read. Check the Doorbell Server address.`,
    );
  });

  it('never says or logs a token', async () => {
    await signedIn();
    await answerOf(page(), page().requests.doorbells());
    sim().setDeviceListMode('unauthorized');
    await answerOf(page(), page().requests.doorbells());
    page().block = savedBlock({ doorbellAccessToken: 'refused-token-SECRET' });
    await answerOf(page(), page().requests.doorbells());

    expect(linesRevealing(everythingSaid(page()), [...sim().secrets, 'refused-token-SECRET'])).toEqual([]);
  });
});
