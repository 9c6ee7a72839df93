/**
 * The settings page's test motion: a motion notification sent where the doorbell service delivers
 * real ones, reaching a real push receiver on loopback, and what the page says when it cannot.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { pushTokenFor } from '../../homebridge-ui/test-motion.js';
import { PushReceiver } from '../../src/push/receiver.js';
import type { DoorbellNotification } from '../../src/push/notification.js';
import { freeLoopbackPort } from '../support/homebridge-process.js';
import { linesRevealing } from '../support/log-secrets.js';
import { answerOf, everythingSaid, failureOf, useSettingsPage, type SettingsPage } from './settings-page.js';

/** Above 2^53: a JS number would turn it into ...992. */
const GARAGE = '9007199254740993';
const FRONT_DOOR = 1234567;

function platformBlock(publicUrl: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    platform: 'DoorbellMotion',
    name: 'Doorbell Motion',
    doorbellServerUrl: 'https://doorbell.example.com',
    doorbellAccessToken: 'doorbell-token-SECRET',
    doorbells: [{ deviceId: FRONT_DOOR, name: 'Front Door' }, { deviceId: GARAGE }],
    push: { host: '127.0.0.1', publicUrl },
    ...overrides,
  };
}

describe('the settings page: test motion', () => {
  const page = useSettingsPage();
  const receivers: PushReceiver[] = [];

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  /** A receiver as the plugin runs it, with the secret of this storage's push.json unless told otherwise. */
  async function startReceiver(current: SettingsPage, secret?: string): Promise<{ publicUrl: string; received: DoorbellNotification[] }> {
    const received: DoorbellNotification[] = [];
    const receiverSecret = secret ?? (await current.pushSecrets.secrets()).receiverSecret;
    const receiver = new PushReceiver({ host: '127.0.0.1', port: 0, secret: receiverSecret, log: current.log, onNotification: (n) => received.push(n) });
    receivers.push(receiver);
    const { port } = await receiver.start();
    return { publicUrl: `http://127.0.0.1:${port}`, received };
  }

  it('delivers a motion for the exact 64-bit device id to the receiver, which accepts it', async () => {
    const { publicUrl, received } = await startReceiver(page());
    page().block = platformBlock(publicUrl);

    expect(await answerOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toEqual({ delivered: true, status: 202 });
    expect(await answerOf(page(), page().requests.testMotion({ deviceId: FRONT_DOOR }))).toEqual({ delivered: true, status: 202 });

    expect(received).toEqual([
      { deviceId: GARAGE, kind: 'motion', id: expect.stringMatching(/^test-[0-9a-f]{16}$/) },
      { deviceId: String(FRONT_DOOR), kind: 'motion', id: expect.stringMatching(/^test-[0-9a-f]{16}$/) },
    ]);
    expect(received[0]?.id).not.toBe(received[1]?.id);
  });

  it('computes the push token as the plugin registers it: <publicUrl>/push/<secret>', () => {
    const receiverSecret = randomBytes(32).toString('base64url');
    expect(pushTokenFor({ publicUrl: 'https://doorbell.home.example' }, { receiverSecret })).toBe(`https://doorbell.home.example/push/${receiverSecret}`);
  });

  it('names the receiver it could not reach, by its origin only', async () => {
    const publicUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    page().block = platformBlock(`${publicUrl}/behind/a/proxy`);

    const message = await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }));

    expect(message).toMatch(new RegExp(`^The push receiver could not be reached at ${publicUrl}: nothing listens there; check that Homebridge runs`));
    expect(message).not.toContain('/push/');
  });

  it('says when the address leads to another receiver (404)', async () => {
    const { publicUrl, received } = await startReceiver(page(), randomBytes(32).toString('base64url'));
    page().block = platformBlock(publicUrl);

    const message = await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }));

    expect(message).toBe(
      `The push receiver at ${publicUrl} did not take the test motion: it answered HTTP 404 Not Found, so the Public Address leads somewhere else than this plugin's push receiver.`,
    );
    expect(received).toEqual([]);
  });

  it('keeps the https rule: no secret goes to a plain http address other than loopback', async () => {
    page().block = platformBlock('http://192.0.2.10:47850');

    expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
      'Test motion not sent: the push address holds a secret and is only used over https, and http://192.0.2.10:47850; use an https:// address (plain http:// is allowed to loopback addresses only).',
    );
  });

  it.each([
    [{ deviceId: '7654321' }, 'Doorbell 7654321 is not in the saved settings: add it, save, and try again.'],
    [{ deviceId: '9223372036854775808' }, 'Test motion needs the device id of a configured doorbell'],
    [{ deviceId: 2 ** 53 + 2 }, 'Test motion needs the device id of a configured doorbell'],
    [{}, 'Test motion needs the device id of a configured doorbell'],
  ])('refuses %j', async (request, words) => {
    const { publicUrl, received } = await startReceiver(page());
    page().block = platformBlock(publicUrl);

    expect(await failureOf(page(), page().requests.testMotion(request))).toContain(words);
    expect(received).toEqual([]);
  });

  it('asks for valid saved settings with the doorbell first', async () => {
    expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
      'Test motion needs saved settings with a doorbell: add one, save, and try again.',
    );
    page().block = { platform: 'DoorbellMotion', name: 'Doorbell Motion' };
    expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
      'Test motion needs saved settings with a doorbell: add one, save, and try again.',
    );
    page().block = platformBlock('http://127.0.0.1:1', { motionTimeout: 1 });
    expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
      'Test motion needs valid saved settings: motionTimeout must be an integer from 5 to 3600. Fix them, save, and try again.',
    );
  });

  it('never says or logs the receiver secret, the push token or the access token', async () => {
    const { publicUrl } = await startReceiver(page());
    page().block = platformBlock(publicUrl);
    await answerOf(page(), page().requests.testMotion({ deviceId: GARAGE }));
    page().block = platformBlock(`http://127.0.0.1:${await freeLoopbackPort()}`);
    await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }));

    const { receiverSecret } = await page().pushSecrets.secrets();
    expect(page().log.lines.length).toBeGreaterThan(0);
    expect(linesRevealing(everythingSaid(page()), [receiverSecret, 'doorbell-token-SECRET'])).toEqual([]);
  });
});
