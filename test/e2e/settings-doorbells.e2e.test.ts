/**
 * The account's doorbells and the Status panel in a real browser: the Homebridge UI 5.10.0 over the
 * storage of a real Homebridge 2 running the built plugin against the simulator. A user who knows
 * only the e-mail and a code signs in, sees the account's doorbells, adds the one not yet set up,
 * saves, takes the restart the Homebridge UI offers, and the plugin subscribes it; a test motion shows
 * on the Status panel; once Homebridge stops, the panel says so.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Locator } from 'playwright-core';
import { freeLoopbackPort, type HomebridgeProcess } from '../../scripts/lib/homebridge-process.js';
import { pollUntil } from '../support/poll.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { describeWithChromium, launchChromium } from './support/browser.js';
import { configUiPlatform, CONFIG_UI_SETUP_TIMEOUT_MS, startConfigUi, uiAccessToken, uiPluginFolder, writeUiAdmin } from './support/config-ui.js';
import { findBySerialNumber, HapCharacteristic, HapService } from './support/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from './support/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from './support/homebridge-versions.js';
import { ACCOUNT, doorbellMotionPlatform, pluginLogLine, SIDE_GATE } from './support/plugin-config.js';
import { expectStoppedInTime, itLeavesNoTrace, NO_FAULT, useRig } from './support/plugin-rig.js';
import { readSavedBlock, savedBlockAfter, SCREENSHOT_DIR, SettingsPage } from './support/settings-page.js';

const BROWSER_STEP_TIMEOUT_MS = 30_000;
const SUBSCRIBED_TIMEOUT_MS = 10_000;
const RESTART_TIMEOUT_MS = STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS;
/** The panel asks every 5 s, and the plugin writes a change within 1 s. */
const PANEL_TIMEOUT_MS = 10_000;
const SAVED = 'Signed in. The account is saved in the settings below.';

/** Each listed doorbell as `name / details / mark or button`, as written (the UI's styles capitalise buttons). */
function texts(items: Locator): Promise<string[]> {
  return items.evaluateAll((elements) =>
    elements.map((item) => [...item.querySelectorAll(':scope > div > div, :scope > span, :scope > button')].map((part) => part.textContent?.trim()).join(' / ')),
  );
}

describeWithBuiltPlugin("the account's doorbells and the Status panel in the Homebridge UI", () => {
  describeWithChromium('Homebridge UI 5.10.0, Chromium, Homebridge 2', () => {
    // Relay mode, the default a user gets.
    const rig = useRig(HOMEBRIDGE_RUNTIMES[0], undefined, { delivery: 'relay' });
    let ui: HomebridgeProcess;
    let uiUrl: string;
    let accessToken: string;
    let browser: Browser;
    let settings: SettingsPage;

    beforeAll(async () => {
      const { sandbox } = rig();
      const port = await freeLoopbackPort();
      // The account without a code: the plugin starts signed out and waits for the page.
      const account = { serverUrl: rig().endpoints.accountUrl, email: ACCOUNT.email, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode };
      await sandbox.writeConfig([doorbellMotionPlatform(rig().endpoints, { account }), configUiPlatform(port)]);
      await writeUiAdmin(sandbox.storagePath);
      ui = await startConfigUi({ storagePath: sandbox.storagePath, pluginPath: await uiPluginFolder(sandbox.root), home: join(sandbox.root, 'ui-home') });
      uiUrl = `http://127.0.0.1:${port}`;
      accessToken = await uiAccessToken(uiUrl);
      browser = await launchChromium();
      await rig().start();
    }, CONFIG_UI_SETUP_TIMEOUT_MS);

    afterAll(async () => {
      await browser?.close();
      await ui?.stop(STOP_TIMEOUT_MS);
    }, STOP_TIMEOUT_MS * 2);

    async function openSettings(): Promise<SettingsPage> {
      await settings?.close();
      settings = await SettingsPage.open(browser, uiUrl, accessToken);
      return settings;
    }

    it(
      "signs in and lists the account's doorbells, digits exact and the chime left out, marking the three already set up",
      async () => {
        const page = await openSettings();
        await page.statusPanel.getByText('Not signed in: sign in above to receive alerts.').waitFor();
        expect(await page.accountDoorbells.count()).toBe(0);

        await page.signIn(ACCOUNT.code);
        expect(await page.accountMessage.textContent()).toBe(SAVED);
        await page.accountDoorbells.first().waitFor();
        await page.screenshot('10-account-doorbells');

        expect(await texts(page.accountDoorbells)).toEqual([
          'Front Door / Device ID 1234567 · lpd_v2 / In your settings',
          'Garage / Device ID 9007199254740993 · lpd_v2 / In your settings',
          'Back Door / Device ID 42 · doorbell_v3 / In your settings',
          'Side Gate / Device ID 9007199254740995 · stickup_cam_v4 / Add',
        ]);
      },
      BROWSER_STEP_TIMEOUT_MS,
    );

    it('adds Side Gate to the settings form once, however fast the clicks, with its id as text', async () => {
      await settings.addButton(SIDE_GATE.name).dblclick();
      await settings.accountDoorbellsMessage.getByText('Side Gate is in the settings below').waitFor();
      await settings.formInput('deviceId', 3).waitFor();

      expect(await settings.formValues('deviceId')).toEqual(['1234567', '42', '9007199254740993', SIDE_GATE.deviceId]);
      expect(await settings.formValues('name')).toEqual(['Doorbell Motion', 'Front Door', 'Back Door', 'Garage', SIDE_GATE.name]);
      expect((await texts(settings.accountDoorbells))[3]).toBe('Side Gate / Device ID 9007199254740995 · stickup_cam_v4 / Added: press Save below');
      expect(await settings.addButton(SIDE_GATE.name).count()).toBe(0);
    });

    it(
      'saves the id exactly, as a string, takes the restart the Homebridge UI offers, and the plugin subscribes Side Gate',
      async () => {
        const block = await savedBlockAfter(rig().sandbox.storagePath, () => settings.save());
        expect(block.doorbells).toContainEqual(expect.objectContaining({ deviceId: SIDE_GATE.deviceId, name: SIDE_GATE.name }));
        expect(await readFile(join(rig().sandbox.storagePath, 'config.json'), 'utf8')).toContain(`"deviceId": "${SIDE_GATE.deviceId}"`);

        // Beside Homebridge the Homebridge UI cannot restart it (hb-service does that): its restart
        // request restarts the rig's Homebridge instead, as hb-service would.
        let restarted: Promise<unknown> | undefined;
        await settings.page.route('**/api/server/restart', async (route) => {
          restarted ??= rig().stop().then(() => rig().start());
          await route.fulfill({ status: 200, contentType: 'application/json', body: '{"ok":true,"command":"SIGTERM","restartingUI":false}' });
        });
        const offer = settings.page.locator('.modal-content', { hasText: 'Restart Homebridge to apply the changes.' }).last();
        await offer.waitFor();
        await settings.page.screenshot({ path: join(SCREENSHOT_DIR, `node${process.versions.node.split('.')[0]}-11-restart-offered.png`) });
        await offer.getByRole('button', { name: 'Restart' }).click();
        await pollUntil(() => restarted !== undefined, Boolean, BROWSER_STEP_TIMEOUT_MS, 'the restart request');
        await restarted;

        await rig().homebridge.waitForLine(pluginLogLine('4 of 4 doorbells subscribed'), SUBSCRIBED_TIMEOUT_MS);
        expect(rig().simulator.subscribedDoorbells.has(SIDE_GATE.deviceId)).toBe(true);
        const accessory = findBySerialNumber(await (await rig().controller()).accessories(), SIDE_GATE.deviceId);
        expect(accessory.name).toBe(SIDE_GATE.name);
        const fault = accessory.characteristic(HapService.MotionSensor, HapCharacteristic.StatusFault);
        await pollUntil(async () => (await (await rig().controller()).read(fault))[0], (value) => value === NO_FAULT, SUBSCRIBED_TIMEOUT_MS, 'Side Gate without a fault');
      },
      RESTART_TIMEOUT_MS + BROWSER_STEP_TIMEOUT_MS,
    );

    it(
      "shows on the Status panel how alerts arrive, each doorbell subscribed, and Side Gate's last motion after a test motion",
      async () => {
        const page = await openSettings();
        await page.statusPanel.getByText(/^Receiving alerts through the relay since \d\d:\d\d/).waitFor({ timeout: PANEL_TIMEOUT_MS });

        expect(await page.sendTestMotion(SIDE_GATE.name)).toBe("Delivered: Side Gate's motion sensor should now show motion.");
        await page.statusPanel.getByText(/Side Gate \(9007199254740995\): subscribed; last motion \d\d:\d\d/).waitFor({ timeout: PANEL_TIMEOUT_MS });
        await page.screenshot('12-status');
        await page.screenshotOwnPart('12-status-own-part');

        const panel = (await page.statusPanel.innerText()).replace(/\s+/g, ' ');
        expect(panel).toMatch(/Registered \d\d:\d\d( [AP]M)?, next refresh \d\d:\d\d/);
        for (const name of ['Front Door (1234567)', 'Back Door (42)', 'Garage (9007199254740993)']) {
          expect(panel).toContain(`${name}: subscribed; no motion yet, no ring yet.`);
        }
        expect(await page.accountDoorbells.last().innerText()).toContain('In your settings');
      },
      BROWSER_STEP_TIMEOUT_MS + PANEL_TIMEOUT_MS,
    );

    it(
      'says Homebridge is not running this plugin once Homebridge has stopped',
      async () => {
        expectStoppedInTime(await rig().stop());

        await settings.statusPanel.getByText('Homebridge is not running this plugin.').waitFor({ timeout: PANEL_TIMEOUT_MS });
        await settings.screenshot('13-not-running');
        expect(await settings.statusPanel.innerText()).not.toContain('subscribed');
        expect((await readSavedBlock(rig().sandbox.storagePath)).doorbells).toHaveLength(4);
      },
      STOP_TIMEOUT_MS + PANEL_TIMEOUT_MS,
    );

    itLeavesNoTrace(rig);
  });
});
