/**
 * The Doorbell Alerts sensor on a real Homebridge 2, in relay mode, with the plugin's production
 * timings, as a paired HomeKit controller sees it: closed through a relay restart and a Homebridge
 * restart; open two minutes after the relay went away (a minute until the doorbells' fault, a minute
 * more until the sensor), still open after a Homebridge restart while the relay stays away, closed
 * once it is back; open a minute after a launch finds the session expired, closed once the settings
 * page signs in again. Each opening is one warning in the log, each closing one info line.
 */
import { expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { SecretMaskingLogger } from '../../src/log.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { signInWithCode } from '../../src/session/sign-in.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { changeOf, HapCharacteristic, HapService, type CharacteristicRef, type HapTestClient } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { ACCOUNT, pluginLogLine } from './support/plugin-config.js';
import { GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup } from './support/plugin-setup.js';

/** ContactSensorState: closed while alerts flow, open once they have stopped. */
const CLOSED = 0;
const OPEN = 1;

/** A doorbell down this long opens the sensor; the relay's stream down this long faults the doorbells. */
const MINUTE_MS = 60_000;
/** A launch subscribes every doorbell within this. */
const SUBSCRIBED_TIMEOUT_MS = 15_000;
/** What the sensor's timers, the log and the controller's events may add to a minute. */
const SLACK_MS = 5_000;
/** The relay is away this long in its restart: the plugin's reconnects (1 to 2 s, then 2 to 4 s, 4 to 8 s) find it within 14 s. */
const RELAY_RESTART_MS = 5_000;
const RECONNECT_TIMEOUT_MS = 20_000;
/** The relay stays away this long after the restart that follows its outage. */
const HELD_OPEN_MS = 5_000;
/** The plugin follows a sign-in on the settings page within 5 s. */
const FOLLOW_TIMEOUT_MS = 5_500;
/** The settings page's second sign-in, with a code of its own. */
const SECOND_CODE = '654321';

const STOPPED = pluginLogLine('Doorbell alerts stopped: ');
const FLOWING = pluginLogLine('Doorbell alerts are flowing again after ');
const RELAY_CONNECTED = pluginLogLine('push relay connected: ');

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES.slice(0, 1))('$label, the Doorbell Alerts sensor', (runtime) => {
  const setup = usePluginSetup(runtime, undefined, { delivery: 'relay' });
  /** A connection of the paired controller that receives the sensor's events during one run. */
  let watch: HapTestClient | undefined;
  let contact: CharacteristicRef;

  /** Every line of every run so far that matches. */
  const linesMatching = (pattern: RegExp): string[] => setup().sandbox.outputLines.filter((line) => pattern.test(line));

  /** Starts Homebridge and follows the sensor's events from the controller; resolves with what it shows at once. */
  async function start(): Promise<unknown> {
    await setup().start();
    const controller = await setup().controller();
    contact = (await controller.accessoryWithSerialNumber('alerts')).characteristic(HapService.ContactSensor, HapCharacteristic.ContactSensorState);
    watch = controller.anotherConnection();
    await watch.subscribe(contact);
    const [shown] = await controller.read(contact);
    return shown;
  }

  async function restart(): Promise<unknown> {
    await watch?.close();
    watch = undefined;
    await setup().stop();
    return start();
  }

  /** No event of the sensor opening since the last one claimed. */
  async function expectNeverOpened(): Promise<void> {
    await expect(watch!.nextEvent(changeOf(contact, OPEN), 0)).rejects.toThrow('No matching HAP event');
  }

  async function shown(): Promise<unknown> {
    const [value] = await (await setup().controller()).read(contact);
    return value;
  }

  it(
    'is closed while alerts flow, and stays closed through a relay restart',
    async () => {
      expect(await start()).toBe(CLOSED);
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
      const relay = setup().relay!;
      const connected = linesMatching(RELAY_CONNECTED).length;

      await relay.stop();
      await sleep(RELAY_RESTART_MS);
      await relay.start();
      await setup().homebridge.waitForLine(RELAY_CONNECTED, RECONNECT_TIMEOUT_MS, setup().homebridge.lines.length - 1);

      expect(linesMatching(RELAY_CONNECTED)).toHaveLength(connected + 1);
      expect(await setup().statusFaults()).toEqual([NO_FAULT, NO_FAULT, NO_FAULT]);
      expect(await shown()).toBe(CLOSED);
      await expectNeverOpened();
      expect(linesMatching(STOPPED)).toEqual([]);
    },
    START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS + RELAY_RESTART_MS + RECONNECT_TIMEOUT_MS,
  );

  it(
    'stays closed through a Homebridge restart: a launch takes less than its minute',
    async () => {
      expect(await restart()).toBe(CLOSED);
      await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);

      expect(await shown()).toBe(CLOSED);
      await expectNeverOpened();
      expect([...linesMatching(STOPPED), ...linesMatching(FLOWING)]).toEqual([]);
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it(
    'opens once the relay has been gone for two minutes: the doorbells\' fault after one, the sensor after one more, with one warning',
    async () => {
      const goneAt = performance.now();
      await setup().relay!.stop();

      await setup().waitForStatusFaults(GENERAL_FAULT, MINUTE_MS + SLACK_MS);
      const faultedAfterMs = performance.now() - goneAt;
      expect(await shown()).toBe(CLOSED);
      await watch!.nextEvent(changeOf(contact, OPEN), MINUTE_MS + SLACK_MS);
      const openedAfterMs = performance.now() - goneAt;

      expect(faultedAfterMs).toBeGreaterThanOrEqual(MINUTE_MS - 1_000);
      expect(openedAfterMs).toBeGreaterThanOrEqual(2 * MINUTE_MS - 1_000);
      expect(openedAfterMs).toBeLessThan(2 * MINUTE_MS + SLACK_MS);
      expect(linesMatching(STOPPED)).toEqual([
        expect.stringMatching(/Doorbell alerts stopped: the relay has been unreachable since (\d{4}-\d\d-\d\d )?\d\d:\d\d\. Check this Homebridge's internet connection and push\.relayUrl on the plugin's settings page in the Homebridge UI; the plugin keeps trying\.$/),
      ]);
    },
    2 * (MINUTE_MS + SLACK_MS) + SLACK_MS,
  );

  it(
    'stays open through a Homebridge restart while the relay is still gone, and closes once it is back, with one info line',
    async () => {
      expect(await restart()).toBe(OPEN);
      await sleep(HELD_OPEN_MS);
      expect(await shown()).toBe(OPEN);

      await setup().relay!.start();
      await watch!.nextEvent(changeOf(contact, CLOSED), SUBSCRIBED_TIMEOUT_MS);

      expect(await setup().statusFaults()).toEqual([NO_FAULT, NO_FAULT, NO_FAULT]);
      expect(linesMatching(STOPPED)).toHaveLength(1);
      expect(linesMatching(FLOWING)).toEqual([expect.stringMatching(/Doorbell alerts are flowing again after \d+ (s|min) \(the relay has been unreachable since (\d{4}-\d\d-\d\d )?\d\d:\d\d\)$/)]);
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS + HELD_OPEN_MS + SUBSCRIBED_TIMEOUT_MS,
  );

  it(
    'opens a minute after a launch finds the session expired, saying to sign in again, and closes once the settings page has',
    async () => {
      const { simulator, sandbox, endpoints } = setup();
      simulator.revokeToken(simulator.issuedTokens.at(-1)!);
      const launchedAt = performance.now();
      expect(await restart()).toBe(CLOSED);

      await watch!.nextEvent(changeOf(contact, OPEN), MINUTE_MS + START_TIMEOUT_MS);
      expect(performance.now() - launchedAt).toBeGreaterThanOrEqual(MINUTE_MS);
      expect(linesMatching(STOPPED).slice(1)).toEqual([
        expect.stringMatching(/Doorbell alerts stopped: the session expired\. Sign in again: .* on the plugin's settings page in the Homebridge UI/),
      ]);

      simulator.addAccount({ ...ACCOUNT, code: SECOND_CODE });
      const log = createTestLogger('UI');
      const account = { serverUrl: endpoints.accountUrl, email: ACCOUNT.email, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode, majorVersion: 14, minorVersion: 0 };
      await signInWithCode(account, SECOND_CODE, { store: new SessionStore(openDataFolder(sandbox.storagePath, log), log), log: new SecretMaskingLogger(log) });
      await watch!.nextEvent(changeOf(contact, CLOSED), FOLLOW_TIMEOUT_MS + SLACK_MS);

      expect(await setup().statusFaults()).toEqual([NO_FAULT, NO_FAULT, NO_FAULT]);
      expect(linesMatching(STOPPED)).toHaveLength(2);
      expect(linesMatching(FLOWING).slice(1)).toEqual([expect.stringMatching(/Doorbell alerts are flowing again after \d+ (s|min) \(the session expired\)$/)]);
      await watch?.close();
    },
    STOP_TIMEOUT_MS + START_TIMEOUT_MS + MINUTE_MS + FOLLOW_TIMEOUT_MS + 2 * SLACK_MS,
  );

  itEndsCleanly(setup);
});
