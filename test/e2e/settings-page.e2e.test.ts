/**
 * The settings page in a real browser: the Homebridge UI users install over the storage of a real
 * Homebridge 2 running the built plugin against the simulator, and a paired HomeKit controller. A user signs in
 * with a wrong code, then the right one, saves the form, sends a test motion that the controller sees,
 * signs out and in again, and saves a set-up with a doorbell access token alone through the standard form,
 * which the page then shows instead of a sign-in.
 */
import { expect, it } from '@jest/globals';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../../src/config/parse-config.js';
import { linesRevealing } from '../support/log-secrets.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { describeWithChromium } from './support/browser.js';
import { CONFIG_UI_VERSION } from '../../scripts/lib/config-ui.js';
import { changeOf } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { ACCOUNT, pluginLogLine } from './support/plugin-config.js';
import { GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup, type DoorbellSensor } from './support/plugin-setup.js';
import { readSavedBlock, savedBlockAfter } from './support/saved-config.js';
import { attributesOf, useSettingsUi, type SettingsPage } from './support/settings-page.js';
import { untilPanelHolds, whileHomebridgePaused } from './support/status-panel.js';

/** The running plugin follows a sign-in or sign-out on the page within this, without a restart. */
const FOLLOW_TIMEOUT_MS = 5_500;

const WRONG_CODE = '999999';
/** Codes the simulator issues for signing in again, once the first is spent. */
const LATER_CODES = ['246810', '135791'] as const;
const GARAGE = { name: 'Garage', deviceId: '9007199254740993' };
const DEVICE_IDS = ['1234567', '42', GARAGE.deviceId];
const SUBSCRIBED_TIMEOUT_MS = 10_000;
const RESTART_TIMEOUT_MS = STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS;
const BROWSER_STEP_TIMEOUT_MS = 30_000;
const MOTION_EVENT_TIMEOUT_MS = 5_000;
/** The Homebridge UI redraws a shown form some 250 ms after the config changed under it: wait past that. */
const REDRAW_MS = 1_000;
const SAVED = 'Signed in. The account is saved in the settings below.';
/** The Status panel asks every 5 s; after a sign-in or sign-out at once, and again after 6.5 s, when the plugin has followed. */
const REFRESH_MS = 5_000;
const FOLLOW_MS = 6_500;
/** The plugin follows within 5 s and writes its status within 1 s; the page's next ask shows it. */
const PANEL_FOLLOW_TIMEOUT_MS = 10_000;
/** What the Status panel says between a sign-in on the page and the running plugin taking it up. */
const WAITING_FOR_PLUGIN = 'Signed in above: waiting for the plugin in Homebridge to follow (a few seconds).';
/** What the panel says only while the plugin has no session: never under the page's "Signed in as". */
const SIGNED_OUT_WORDS = /Not signed in|not signed in|once you sign in|Not registered for alerts yet\./;

/**
 * The page asked for the status as soon as the account changed (a sign-out's status, say, is news
 * only once the plugin followed, but an answer under way may be older than the change), and again
 * once the plugin had time to follow it. Resolves with the asks' times (ms) after the answer to the
 * page's last `change` request, once they reach `untilMs` after it.
 */
async function expectAskedAtOnceAndAfterFollowing(settings: SettingsPage, change: string, untilMs = FOLLOW_MS): Promise<number[]> {
  /** The page's requests, when the change was answered, and the asks for the status since (ms after it). */
  const sinceChange = async () => {
    const { requests } = await settings.record();
    const answeredAt = requests.filter(({ path }) => path === change).at(-1)?.answeredAt;
    if (answeredAt === undefined) {
      throw new Error(`The page has no answer to ${change} on record`);
    }
    const asks = requests.filter(({ path, at }) => path === '/status' && at >= answeredAt).map(({ at }) => at - answeredAt);
    return { requests, answeredAt, asks };
  };
  const { requests, answeredAt, asks } = await pollUntil(sinceChange, (since) => since.asks.some((at) => at >= untilMs), untilMs + 5_000, `an ask for the status ${untilMs} ms after ${change}`);
  // At once: right after the change's answer or, with an ask under way then (its answer may be older
  // than the change), right after that ask's answer, however long a busy machine took to give it.
  const underWay = requests.find(({ path, at, answeredAt: done }) => path === '/status' && at < answeredAt && done !== undefined && done > answeredAt);
  const askFrom = (underWay?.answeredAt ?? answeredAt) - answeredAt;
  expect(asks[0] - askFrom).toBeLessThan(500);
  expect(asks.filter((at) => at >= FOLLOW_MS - 500 && at < FOLLOW_MS + 1_500)).toHaveLength(1);
  return asks;
}

describeWithBuiltPlugin('the settings page in the Homebridge UI', () => {
  describeWithChromium(`Homebridge UI ${CONFIG_UI_VERSION}, Chromium, ${HOMEBRIDGE_RUNTIMES[0].label}`, () => {
    const setup = usePluginSetup(HOMEBRIDGE_RUNTIMES[0]);
    const settingsUi = useSettingsUi(setup);

    /** The settings form after a sign-in, once any redraw is over: it must still hold everything. */
    async function expectFormKept(page: SettingsPage, serverUrl = setup().simulator.accountUrl): Promise<void> {
      await sleep(REDRAW_MS);
      expect(await page.formValues('serverUrl')).toEqual([serverUrl]);
      expect(await page.formValues('doorbellServerUrl')).toEqual([setup().simulator.doorbellUrl]);
      expect(await page.formValues('deviceId')).toEqual(DEVICE_IDS);
    }

    it(
      'shows Not signed in, the sign-in form filled in from the configured account, and every device id as valid text',
      async () => {
        await setup().waitForStatusFaults(GENERAL_FAULT, SUBSCRIBED_TIMEOUT_MS);
        const page = await settingsUi.open();
        await page.screenshot('01-not-signed-in');

        expect(await page.accountState.textContent()).toBe('Not signed in');
        expect(await page.signInInput('Account server').inputValue()).toBe(setup().simulator.accountUrl);
        expect(await page.signInInput('E-mail').inputValue()).toBe(ACCOUNT.email);
        expect(await page.signInInput('Country').inputValue()).toBe('US');
        expect(await page.signInInput('Country calling code').inputValue()).toBe('1');
        expect(await page.signInInput('Verification code').evaluate(attributesOf)).toEqual({ type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code' });
        // Back Door's id is a JSON integer in config.json, which the plugin accepts: the form shows it as valid text.
        expect(await page.formValues('deviceId')).toEqual(DEVICE_IDS);
        expect(await page.formInput('deviceId').evaluateAll((inputs) => inputs.map((input) => input.classList.contains('ng-invalid')))).toEqual([false, false, false]);
      },
      BROWSER_STEP_TIMEOUT_MS,
    );

    it('says what to do about a wrong code on this page, and empties the spent code', async () => {
      const settings = settingsUi.current();
      await settings.signIn(WRONG_CODE);
      await settings.screenshot('02-wrong-code');

      expect(await settings.accountMessage.textContent()).toBe(
        'Sign-in refused: the verification code is wrong or expired (service code 2018). ' +
          'Sign in again: request a new verification code in the doorbell app and sign in with it above.',
      );
      expect(await settings.signInInput('Verification code').inputValue()).toBe('');
      expect(await settings.accountState.textContent()).toBe('Not signed in');
    });

    it('signs in with the right code, keeps the settings form whole, its Save keeps the account, never the code, and the Status panel follows', async () => {
      const settings = settingsUi.current();
      // However fast the plugin follows, the page is ahead of it for a moment: paused, it stays behind.
      await whileHomebridgePaused(setup().homebridge, async () => {
        await settings.signIn(ACCOUNT.code);
        await untilPanelHolds(settings, WAITING_FOR_PLUGIN, PANEL_FOLLOW_TIMEOUT_MS);
        await settings.screenshotOwnPart('03a-waiting-for-plugin');
      });
      await expectFormKept(settings);
      await settings.screenshot('03-signed-in');

      expect(await settings.accountState.textContent()).toMatch(/^Signed in as e2e\+motion \(e2e\+motion@example\.com\), region us, since \w{3} \d+, \d{4}/);
      expect(await settings.accountMessage.textContent()).toBe(SAVED);
      const account = { serverUrl: setup().simulator.accountUrl, email: ACCOUNT.email, country: 'US', countryCode: '1', majorVersion: 14, minorVersion: 0 };
      expect((await readSavedBlock(setup().sandbox.storagePath)).account).toEqual(account);
      // The Status panel follows the sign-in as soon as the plugin has; the form's Save below closes it.
      await untilPanelHolds(settings, 'Front Door (1234567): subscribed', PANEL_FOLLOW_TIMEOUT_MS);
      expect(await settings.statusPanel.innerText()).not.toContain('Not signed in');
      // At no moment did the panel say the plugin is signed out under the page's "Signed in as".
      const { moments } = await settings.record();
      expect(moments.filter(({ account, panel }) => account.startsWith('Signed in as') && SIGNED_OUT_WORDS.test(panel))).toEqual([]);
      expect(moments.some(({ panel }) => panel.includes(WAITING_FOR_PLUGIN))).toBe(true);
      await expectAskedAtOnceAndAfterFollowing(settings, '/sign-in');

      const { doorbellServerUrl, doorbells, ...block } = await savedBlockAfter(setup().sandbox.storagePath, () => settings.save());
      expect([block.account, doorbellServerUrl]).toEqual([account, setup().simulator.doorbellUrl]);
      expect((doorbells as Array<{ deviceId: string }>).map(({ deviceId }) => deviceId)).toEqual(DEVICE_IDS);
      expect(await readFile(join(setup().sandbox.storagePath, 'config.json'), 'utf8')).not.toMatch(new RegExp(`${ACCOUNT.code}|${WRONG_CODE}`));
    }, BROWSER_STEP_TIMEOUT_MS);

    it(
      "follows the sign-in without a restart, and sends a test motion that turns on the doorbell's motion sensor at the controller",
      async () => {
        await setup().waitForStatusFaults(NO_FAULT, FOLLOW_TIMEOUT_MS);
        await setup().homebridge.waitForLine(pluginLogLine('Signed in on the settings page'), 0);
        expect(setup().homebridge.lines.filter((line) => /is running on port/.test(line))).toHaveLength(1);
        const { motionDetected } = (await setup().sensors()).find(({ serialNumber }) => serialNumber === GARAGE.deviceId) as DoorbellSensor;
        const controller = await setup().controller();
        await controller.subscribe(motionDetected);
        const page = await settingsUi.open();

        const outcome = await page.sendTestMotion(GARAGE.name);
        await controller.nextEvent(changeOf(motionDetected, true), MOTION_EVENT_TIMEOUT_MS);
        await page.screenshot('04-test-motion');

        expect(outcome).toBe("Delivered: Garage's motion sensor should now show motion.");
        await setup().homebridge.waitForLine(pluginLogLine('Motion at Garage'), MOTION_EVENT_TIMEOUT_MS);
      },
      FOLLOW_TIMEOUT_MS + BROWSER_STEP_TIMEOUT_MS,
    );

    it('signs out: Not signed in, session.json gone, the running plugin faults every doorbell within 5 s, and the Status panel follows', async () => {
      const settings = settingsUi.current();
      await settings.signOut();
      await settings.screenshot('05-signed-out');

      expect(await settings.accountMessage.textContent()).toBe('Signed out.');
      await expect(readFile(join(setup().sandbox.storagePath, 'doorbell-motion', 'session.json'))).rejects.toThrow('ENOENT');
      await setup().waitForStatusFaults(GENERAL_FAULT, FOLLOW_TIMEOUT_MS);
      await setup().homebridge.waitForLine(pluginLogLine('Signed out on the settings page'), 0);

      await untilPanelHolds(settings, 'Not signed in: sign in above to receive alerts.', PANEL_FOLLOW_TIMEOUT_MS);
      expect(await settings.statusPanel.innerText()).not.toMatch(/: subscribed/);
      await expectAskedAtOnceAndAfterFollowing(settings, '/sign-out');
    }, BROWSER_STEP_TIMEOUT_MS);

    it('says the account could not be checked when session.json cannot be read, and why, rather than checking forever', async () => {
      const sessionPath = join(setup().sandbox.storagePath, 'doorbell-motion', 'session.json');
      // A folder where the file belongs: opened for reading, it cannot be read (EISDIR).
      await mkdir(sessionPath, { recursive: true });
      try {
        const settings = await settingsUi.open();
        expect(await settings.accountState.textContent()).toBe('The account could not be checked');
        expect(await settings.accountMessage.textContent()).toBe(`Reading the account state failed: Could not read ${sessionPath}: EISDIR. It is read again next time.`);
      } finally {
        await rm(sessionPath, { recursive: true });
      }
      const settings = await settingsUi.open();
      expect(await settings.accountState.textContent()).toBe('Not signed in');
    }, 3 * BROWSER_STEP_TIMEOUT_MS);

    it('signs in, out and in again in one visit, keeping the form whole, never claims a save the UI failed, and keeps one Status refresh going', async () => {
      const settings = settingsUi.current();
      // The account server as a user may paste it, with a slash config.json does not have yet.
      const serverUrl = `${setup().simulator.accountUrl}/`;
      await settings.signInInput('Account server').fill(serverUrl);
      // The Homebridge UI's own requests to save the plugin's config fail, as on a server error.
      const saves = '**/api/config-editor/plugin/**';
      await settings.page.route(saves, (route) => (route.request().method() === 'POST' ? route.fulfill({ status: 500, body: '{}' }) : route.continue()));
      setup().simulator.addAccount({ ...ACCOUNT, code: LATER_CODES[0] });
      await settings.signIn(LATER_CODES[0]);
      // The UI's save resolves whatever happened up to 5.10, and the page finds config.json without the
      // account; later UIs reject the save with their own reason.
      expect(await settings.accountMessage.textContent()).toMatch(
        /^Signed in, but the account could not be saved in the settings \((config\.json did not hold it after 5 s|Failed to save config)\): press Save below\.$/,
      );
      await expectFormKept(settings, serverUrl);
      await settings.page.unroute(saves);

      await settings.signOut();
      setup().simulator.addAccount({ ...ACCOUNT, code: LATER_CODES[1] });
      await settings.signIn(LATER_CODES[1]);
      expect(await settings.accountMessage.textContent()).toBe(SAVED);
      expect((await readSavedBlock(setup().sandbox.storagePath)).account).toMatchObject({ serverUrl });
      await expectFormKept(settings, serverUrl);

      // Three changes in a few seconds, then quiet: one ask at a time, REFRESH_MS apart, never two timers.
      const asks = await expectAskedAtOnceAndAfterFollowing(settings, '/sign-in', FOLLOW_MS + REFRESH_MS);
      const gaps = asks.slice(1).map((at, index) => at - (asks[index] as number));
      expect(gaps.filter((gap) => gap < REFRESH_MS - 500)).toEqual([]);
    }, BROWSER_STEP_TIMEOUT_MS + FOLLOW_MS + REFRESH_MS + PANEL_FOLLOW_TIMEOUT_MS);

    it('draws every number as a number field with its value, the code only under Advanced, and plain, agreeing labels', async () => {
      const settings = settingsUi.current();
      await settings.page.locator('.modal-body legend', { hasText: 'Advanced' }).click();
      await settings.screenshot('06-settings-form');

      const motionTimeouts = settings.formInput('motionTimeout');
      expect(await motionTimeouts.evaluateAll((inputs) => inputs.map((input) => input.getAttribute('type')))).toEqual(['number', 'number', 'number', 'number']);
      expect(await motionTimeouts.last().inputValue()).toBe('5');
      expect(await settings.formInput('port').evaluate(attributesOf)).toMatchObject({ type: 'number' });
      expect(await settings.formInput('port').inputValue()).toBe(String(setup().endpoints.pushPort));
      // The page signs in; the code in config.json is for set-ups without the UI, so it waits under Advanced.
      const fieldset = (title: string) => settings.page.locator('.modal-body fieldset', { has: settings.page.locator('legend', { hasText: title }) });
      await expect(fieldset('Advanced').locator('input[name="code"]').isVisible()).resolves.toBe(true);
      expect(await fieldset('Account and Services').locator('input[name="code"]').count()).toBe(0);
      expect(await settings.formInput('code').evaluate(attributesOf)).toEqual({ type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code' });
      const text = await settings.formText();
      expect(text).toContain('Verification Code Only for set-ups without the Homebridge UI: the 6-digit code from the doorbell app');
      expect(text).toContain('Country Calling Code');
      expect(text).toContain('Delivery Type');
      expect(text).toContain('Sign-in Version (Major)');
      expect(text).toContain('The default is right');
      expect(text).not.toMatch(/restart Homebridge|pn_service|pn_dict_version|Agreement Major|Country code/i);
    });

    it('offers the relay fields for relay mode and the receiver fields for direct mode', async () => {
      const settings = settingsUi.current();
      const receiverFields = () => Promise.all(['publicUrl', 'port', 'host'].map((name) => settings.formInput(name).count()));
      const relayFields = () => Promise.all(['relayUrl', 'relayToken'].map((name) => settings.formInput(name).count()));
      expect([await receiverFields(), await relayFields()]).toEqual([[1, 1, 1], [0, 0]]);

      await settings.page.locator('.modal-body select[name="mode"]').selectOption({ label: 'Through a push relay: nothing to set up (recommended)' });
      await settings.formInput('relayUrl').waitFor();
      await settings.screenshot('06b-relay-mode');

      expect([await receiverFields(), await relayFields()]).toEqual([[0, 0, 0], [1, 1]]);
      expect(await settings.formInput('relayUrl').getAttribute('placeholder')).toBe('https://ntfy.sh');
      expect(await settings.formInput('relayToken').getAttribute('type')).toBe('password');
    });

    it('offers each doorbell its controls, the Chime switch only with the button and the extra sensors as checkboxes, saved as the plugin reads them', async () => {
      const page = await settingsUi.open();
      const inputs = (selector: string) => page.page.locator(`.modal-body input${selector}`);
      const text = await page.formText();
      for (const label of ['Chime Switch', 'Motion Alerts Switch', 'Extra Motion Sensors', 'Person', 'Vehicle', 'Other motion']) {
        expect([label, text.includes(label)]).toEqual([label, true]);
      }
      expect(await Promise.all(['[name="chimeSwitch"]', '[name="motionSwitch"]', '[value="person"]'].map((selector) => inputs(selector).count()))).toEqual([3, 3, 3]);

      await inputs('[name="button"]').first().setChecked(false);
      // Later UIs draw a condition's outcome a moment after the change.
      await inputs('[name="chimeSwitch"]').nth(2).waitFor({ state: 'detached' });
      await expect(inputs('[name="chimeSwitch"]').count()).resolves.toBe(2);
      await inputs('[name="motionSwitch"]').first().setChecked(true);
      await inputs('[value="person"]').first().setChecked(true);
      await inputs('[value="vehicle"]').nth(1).setChecked(true);
      await inputs('[name="chimeSwitch"]').first().setChecked(true);
      await page.screenshot('08-doorbell-controls');

      const block = await savedBlockAfter(setup().sandbox.storagePath, () => page.save());
      // The Chime switch hidden with the button is not saved; an empty list of detections is not either.
      expect(block.doorbells).toEqual([
        { deviceId: '1234567', name: 'Front Door', button: false, motionSwitch: true, detections: ['person'] },
        { deviceId: '42', name: 'Back Door', button: true, chimeSwitch: true, motionSwitch: false, detections: ['vehicle'] },
        { deviceId: GARAGE.deviceId, name: GARAGE.name, button: true, chimeSwitch: false, motionSwitch: false },
      ]);
      expect(parseConfig(block)).toMatchObject({ status: 'ok', problems: [], warnings: [] });
    });

    it(
      'saves a set-up with a doorbell access token and no account, with no error shown, and a typed number as a number; the plugin accepts it',
      async () => {
        const page = await settingsUi.open();
        for (const name of ['serverUrl', 'email', 'country', 'countryCode']) {
          await page.formInput(name).fill('');
        }
        await page.formInput('motionTimeout').first().fill('45');
        await page.page.locator('.modal-body legend', { hasText: 'Advanced' }).click();
        await page.formInput('doorbellAccessToken').fill(setup().simulator.issuedTokens[0] as string);
        await page.screenshot('07-token-only');

        expect(await page.formText()).not.toContain('This field is required');
        // The UI marks the standard form valid with a green check beside Save, not the orange mark.
        const mark = page.page.locator('.modal-footer i.fa-circle-check, .modal-footer i.fa-circle-exclamation');
        expect(await mark.getAttribute('class')).toContain('fa-circle-check');
        const block = await savedBlockAfter(setup().sandbox.storagePath, () => page.save());
        expect(block.doorbellAccessToken).toBe(setup().simulator.issuedTokens[0]);
        expect(Object.keys((block.account as object | undefined) ?? {}).sort()).toEqual(['majorVersion', 'minorVersion']);
        expect((block.doorbells as Array<{ motionTimeout?: unknown }>).map(({ motionTimeout }) => motionTimeout)).toEqual([45, undefined, undefined]);
        const fromLine = setup().homebridge.lines.length;
        await setup().stop();
        const homebridge = await setup().start();
        await setup().waitForStatusFaults(NO_FAULT, SUBSCRIBED_TIMEOUT_MS);
        expect(homebridge.lines.slice(fromLine).filter((line) => /Configuration:|Doing nothing/.test(line))).toEqual([]);

        // The page says what the plugin uses, offers no sign-in, and lists the doorbells with the token.
        const tokenPage = await settingsUi.open();
        await tokenPage.accountDoorbells.first().waitFor();
        await tokenPage.screenshot('08-token-page');
        expect(await tokenPage.accountState.textContent()).toBe('Using a doorbell access token');
        expect(await tokenPage.frame.locator('#token-note').innerText()).toMatch(/^Alerts use the doorbell access token from the settings below/);
        expect(await tokenPage.frame.locator('#sign-in-form').isVisible()).toBe(false);
        expect(await tokenPage.accountDoorbells.count()).toBe(4);
      },
      RESTART_TIMEOUT_MS + BROWSER_STEP_TIMEOUT_MS * 2,
    );

    it('leaves no code, token or push secret in the Homebridge UI log, and no code in the plugin log', async () => {
      const pushSecrets = JSON.parse(await readFile(join(setup().sandbox.storagePath, 'doorbell-motion', 'push.json'), 'utf8')) as Record<string, string>;
      const codes = [ACCOUNT.code, WRONG_CODE, ...LATER_CODES];
      expect(linesRevealing(settingsUi.uiLines(), [...codes, ...setup().simulator.secrets, ...Object.values(pushSecrets)])).toEqual([]);
      expect(setup().linesRevealingSecrets(codes)).toEqual([]);
    });

    itEndsCleanly(setup);
  });
});
