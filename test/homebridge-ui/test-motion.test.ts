/**
 * The settings page's test motion: a motion notification sent where the doorbell service delivers
 * real ones, reaching a real push receiver on loopback, and what the page says when it cannot.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { pushAddressFor } from '../../homebridge-ui/test-motion.js';
import { startRelay } from '../../simulator/relay/index.js';
import type { Relay } from '../../simulator/relay/index.js';
import { listen, type ListeningServer } from '../../simulator/servers.js';
import { PushReceiver } from '../../src/push/direct/receiver.js';
import type { DoorbellNotification } from '../../src/push/notification.js';
import { freeLoopbackPort } from '../../scripts/lib/homebridge-process.js';
import { runUntil } from '../support/fake-clock.js';
import { linesRevealing } from '../support/log-secrets.js';
import { answerOf, everythingSaid, failureOf, useSettingsPage, type SettingsPage } from './settings-page.js';

/** Above 2^53: a JS number would turn it into ...992. */
const GARAGE = '9007199254740993';
const FRONT_DOOR = 1234567;

/** Where the receiver listens on this host, by the block's push.port: nothing, unless a test starts one there. */
let receiverPort: number;

function platformBlock(publicUrl: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    platform: 'DoorbellMotion',
    name: 'Doorbell Motion',
    doorbellServerUrl: 'https://doorbell.example.com',
    doorbellAccessToken: 'doorbell-token-SECRET',
    doorbells: [{ deviceId: FRONT_DOOR, name: 'Front Door' }, { deviceId: GARAGE }],
    push: { host: '127.0.0.1', port: receiverPort, publicUrl },
    ...overrides,
  };
}

describe('the settings page: test motion', () => {
  const page = useSettingsPage();
  const receivers: PushReceiver[] = [];

  beforeEach(async () => {
    receiverPort = await freeLoopbackPort();
  });

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  /** A receiver as the plugin runs it, with the secret of this storage's push.json unless told otherwise, on any free port unless told one. */
  async function startReceiver(current: SettingsPage, secret?: string, listenOn = 0): Promise<{ publicUrl: string; received: DoorbellNotification[] }> {
    const received: DoorbellNotification[] = [];
    const receiverSecret = secret ?? (await current.pushSecrets.secrets()).receiverSecret;
    const receiver = new PushReceiver({ host: '127.0.0.1', port: listenOn, secret: receiverSecret, log: current.log, onNotification: (n) => received.push(n) });
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

  it('computes the push token as the plugin registers it: <publicUrl>/push/<secret>, or <relayUrl>/<topic>?up=1', () => {
    const secrets = { receiverSecret: randomBytes(32).toString('base64url'), relayTopic: `up${randomBytes(9).toString('base64url')}` };
    const push = {
      relay: { relayUrl: 'https://ntfy.example.org' },
      direct: { host: '0.0.0.0', port: 47850, publicUrl: 'https://doorbell.home.example' },
      registration: { service: 'webhook', os: 'linux', dictVersion: '2.0.0' },
    };
    expect(pushAddressFor({ ...push, mode: 'direct' }, secrets).token).toBe(`https://doorbell.home.example/push/${secrets.receiverSecret}`);
    expect(pushAddressFor({ ...push, mode: 'relay' }, secrets).token).toBe(`https://ntfy.example.org/${secrets.relayTopic}?up=1`);
  });

  it('names the receiver it could not reach, by its origin only', async () => {
    const publicUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    page().block = platformBlock(`${publicUrl}/behind/a/proxy`);

    const message = await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }));

    expect(message).toMatch(new RegExp(`^The push receiver could not be reached at ${publicUrl}: nothing listens there; check that Homebridge runs`));
    expect(message).not.toContain('/push/');
  });

  it('delivers to the receiver on this host when the public address does not answer from here, and says what that means', async () => {
    const { received } = await startReceiver(page(), undefined, receiverPort);
    const publicUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    page().block = platformBlock(publicUrl);

    expect(await answerOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toEqual({
      delivered: true,
      status: 202,
      warning:
        `The receiver works here, but your public address ${publicUrl} did not answer from inside your network; ` +
        'many routers cannot loop back to their own public address, so try it from outside.',
    });
    expect(received.map(({ deviceId }) => deviceId)).toEqual([GARAGE]);
  });

  it('names both addresses when neither the public one nor the receiver on this host answers', async () => {
    const publicUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    page().block = platformBlock(publicUrl, { push: { host: '0.0.0.0', port: receiverPort, publicUrl } });

    expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
      `The push receiver could not be reached at ${publicUrl}: nothing listens there; check that Homebridge runs with the saved settings and is signed in, and that the Public Address leads to its push receiver. ` +
        `On this host, too: The push receiver could not be reached at http://127.0.0.1:${receiverPort}: nothing listens there; check that Homebridge runs with the saved settings and is signed in, and that the Public Address leads to its push receiver.`,
    );
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

  describe('in relay mode', () => {
    let relay: Relay;

    afterEach(async () => {
      await relay.close();
    });

    async function relayBlock(): Promise<string> {
      relay = await startRelay();
      page().block = { ...platformBlock('unused'), push: { relayUrl: relay.url } };
      return (await page().pushSecrets.secrets()).relayTopic;
    }

    it('publishes the motion to the topic the plugin subscribes to', async () => {
      const topic = await relayBlock();
      const stream = await fetch(`${relay.url}/${topic}/json`);

      expect(await answerOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toEqual({ delivered: true, status: 200 });
      expect(relay.messages(topic).map(({ message }) => JSON.parse(message.replace(GARAGE, `"${GARAGE}"`)) as unknown)).toEqual([
        { device_id: GARAGE, kind: 'motion', id: expect.stringMatching(/^test-[0-9a-f]{16}$/) },
      ]);
      await stream.body?.cancel();
    });

    it('says in plain words that the plugin is not receiving yet when the relay refuses the topic (507)', async () => {
      await relayBlock();

      expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
        `The push relay at ${relay.url} did not take the test motion: the plugin is not receiving alerts yet. ` +
          'Check that Homebridge is running with the saved settings (restart it after saving them), then try again.',
      );
    });

    it('says to sign in when the relay refuses the topic and the plugin has neither a session nor a token', async () => {
      await relayBlock();
      const block: Record<string, unknown> = { ...page().block, account: { serverUrl: 'https://account.example.com', email: 'you@example.com', country: 'US', countryCode: '1' } };
      delete block.doorbellAccessToken;
      page().block = block;

      expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
        `The push relay at ${relay.url} did not take the test motion: the plugin is not receiving alerts yet, as it is not signed in. Sign in above, then try again.`,
      );
    });

    it('never says or logs the topic', async () => {
      const topic = await relayBlock();
      await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }));

      expect(linesRevealing(everythingSaid(page()), [topic])).toEqual([]);
    });
  });

  describe('in relay mode, at a server that is no relay', () => {
    const servers: ListeningServer[] = [];

    afterEach(async () => {
      await Promise.all(servers.splice(0).map((server) => server.close()));
    });

    /**
     * A server on loopback that answers every request 200 with `body`, as a web page, a captive portal
     * or a proxy does; `endless`: it never ends the body.
     */
    async function notARelay(contentType: string, body: string, { endless = false } = {}): Promise<{ url: string; requests: string[] }> {
      const requests: string[] = [];
      const server = await listen('127.0.0.1', 0, (request, response) => {
        requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
        request.resume();
        response.writeHead(200, { 'Content-Type': contentType });
        if (endless) {
          response.write(body);
        } else {
          response.end(body);
        }
      });
      servers.push(server);
      return { url: server.url, requests };
    }

    it.each([
      ['a web page', 'text/html', '<!doctype html><title>Welcome</title><p>Sign in to the Wi-Fi</p>'],
      ['JSON that is no stored message', 'application/json', '{"success":true}'],
      ['an ntfy event that is no message', 'application/json', '{"id":"x1","time":1700000000,"event":"keepalive","topic":"t"}'],
      ['nothing', 'text/plain', ''],
    ])('says a relay that answers 200 with %s is not an ntfy relay, naming push.relayUrl', async (_what, contentType, body) => {
      const impostor = await notARelay(contentType, body);
      page().block = { ...platformBlock('unused'), push: { relayUrl: impostor.url } };

      expect(await failureOf(page(), page().requests.testMotion({ deviceId: GARAGE }))).toBe(
        `The push relay at ${impostor.url} answered HTTP 200, but not as an ntfy relay, so the test motion went nowhere: check the Relay Server (push.relayUrl).`,
      );
      expect(impostor.requests).toEqual([expect.stringMatching(/^POST \/up[A-Za-z0-9_-]{12}\?up=1$/)]);
    });

    it('gives up on an answer that never ends, within the test motion\'s time', async () => {
      const impostor = await notARelay('text/html', '<!doctype html><title>Loading', { endless: true });
      page().block = { ...platformBlock('unused'), push: { relayUrl: impostor.url } };
      // The test motion's time is an AbortSignal.timeout, whose timer no fake clock reaches: it is put
      // on jest's fake clock here, so that the give-up is seen to come when that timer fires, not
      // before, and not from anything slower, however fast the machine is.
      const timeouts: number[] = [];
      jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
      const onFakeClock = jest.spyOn(AbortSignal, 'timeout').mockImplementation((ms: number) => {
        timeouts.push(ms);
        const controller = new AbortController();
        setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), ms);
        return controller.signal;
      });
      try {
        let failure: string | undefined;
        void failureOf(page(), page().requests.testMotion({ deviceId: GARAGE })).then((message) => (failure = message));
        // The endless answer has begun: the relay was asked and the give-up timer is set.
        await runUntil(() => impostor.requests.length === 1 && timeouts.length === 1 && jest.getTimerCount() > 0, 'the endless answer', 0);

        await jest.advanceTimersByTimeAsync(1_999);
        expect(failure).toBeUndefined();

        await jest.advanceTimersByTimeAsync(1);
        await runUntil(() => failure !== undefined, 'the give-up', 0);
        expect(timeouts).toEqual([2_000]);
        expect(failure).toBe(`The push relay at ${impostor.url} did not finish its answer within 2 s; check the Relay Server (push.relayUrl).`);
      } finally {
        onFakeClock.mockRestore();
        jest.useRealTimers();
      }
    });
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
