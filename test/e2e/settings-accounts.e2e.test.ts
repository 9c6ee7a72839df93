/**
 * The settings page with several accounts in a real browser, inside the Homebridge UI, against the
 * simulator's accounts: a user signed in to one account adds another, signs each in with its own
 * code, adds a doorbell to each from its own list, saves, and starts Homebridge; the Status panel
 * shows each account's doorbells under its label; one account signed out on the page faults only its
 * own doorbells in HomeKit, without a restart, while the other stays signed in; signed in again, the
 * Status panel says it waits for the plugin under that account until the plugin follows; then it is
 * removed after the page asks.
 */
import { expect, it } from '@jest/globals';
import { copyFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { accountKey } from '../../src/values/address.js';
import { findBySerialNumber, HapCharacteristic, HapService } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { CONFIG_UI_VERSION } from '../../scripts/lib/config-ui.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import { linesRevealing } from '../support/log-secrets.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { describeWithChromium } from './support/browser.js';
import { doorbellMotionPlatform } from './support/plugin-config.js';
import { GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup, type PluginSetup } from './support/plugin-setup.js';
import { readSavedBlock, savedBlockAfter } from './support/saved-config.js';
import { screenshotPath, useSettingsUi, type SettingsPage } from './support/settings-page.js';
import { panelText, untilPanelHolds, whileHomebridgePaused } from './support/status-panel.js';

const BROWSER_STEP_TIMEOUT_MS = 30_000;
const SAVED = 'Signed in. The account is saved in the settings below.';
/** The plugin follows a sign-out within 5 s and writes its status within 1 s; the panel asks every 5 s. */
const FOLLOW_TIMEOUT_MS = 12_000;
const SUBSCRIBED_TIMEOUT_MS = 15_000;

const HOME = { email: 'home@example.com', code: '111111', doorbells: [{ id: '1000001', name: 'Front Door' }, { id: '1000002', name: 'Back Door' }] };
/** A code the simulator issues for signing Cabin in again, once its first is spent. */
const LATER_CODE = '246810';
const CABIN = { email: 'cabin@example.com', code: '222222', doorbells: [{ id: '2000001', name: 'Cabin Porch' }, { id: '2000002', name: 'Cabin Shed' }] };

/** Each account of the simulator with its own two doorbells, and a device list of them. */
function addAccounts(setup: PluginSetup): void {
  for (const { email, code, doorbells } of [HOME, CABIN]) {
    setup.simulator.addAccount({
      email,
      code,
      doorbells: doorbells.map(({ id }) => id),
      devices: doorbells.map(({ id, name }) => ({ list: 'doorbots', id, description: name, kind: 'lpd_v2' })),
    });
  }
}

/** Each listed doorbell as `name / details / mark or button`, as written (the UI's styles capitalise buttons). */
function texts(items: Locator): Promise<string[]> {
  return items.evaluateAll((elements) =>
    elements.map((item) => [...item.querySelectorAll(':scope > div > div, :scope > span, :scope > button')].map((part) => part.textContent?.trim()).join(' / ')),
  );
}

/** One account's section of the page, and what a test does in it. */
function accountSection(page: SettingsPage, at: number) {
  const section = page.frame.locator('#accounts > section').nth(at);
  const part = (name: string) => section.locator(`[data-part="${name}"]`);
  return {
    section,
    heading: part('account-heading'),
    state: part('account-state'),
    message: part('account-message'),
    doorbells: part('account-doorbell-list').locator('li'),
    async signIn(email: string, code: string): Promise<void> {
      await section.getByLabel('E-mail', { exact: true }).fill(email);
      await section.getByLabel('Verification code', { exact: true }).fill(code);
      await part('sign-in').click();
      await part('account-message').filter({ hasText: SAVED }).waitFor();
    },
    add: (name: string) => section.getByRole('button', { name: `Add ${name}`, exact: true }).click(),
    signOut: () => part('sign-out').click(),
    remove: () => part('remove-account').click(),
    confirm: part('remove-confirm'),
    confirmed: part('remove-confirmed'),
  };
}

describeWithBuiltPlugin('several accounts on the settings page in the Homebridge UI', () => {
  describeWithChromium(`Homebridge UI ${CONFIG_UI_VERSION}, Chromium, ${HOMEBRIDGE_RUNTIMES[0].label}`, () => {
    const setup = usePluginSetup(HOMEBRIDGE_RUNTIMES[0], addAccounts, { delivery: 'relay' });
    // The one account at the top, signed out, with one of its doorbells; Homebridge is not started:
    // the page alone is under test here.
    const settingsUi = useSettingsUi(setup, {
      block: ({ endpoints }) => doorbellMotionPlatform(endpoints, { account: { serverUrl: endpoints.accountUrl, email: HOME.email, country: 'US', countryCode: '1' }, doorbells: [{ deviceId: '1000001', name: 'Front Door' }] }),
      startHomebridge: false,
    });
    const storagePath = (): string => setup().sandbox.storagePath;
    const folderOf = (email: string) => join(storagePath(), 'doorbell-motion', 'accounts', accountKey({ account: { serverUrl: setup().endpoints.accountUrl, email } }) as string);
    const exists = (path: string) =>
      stat(path).then(
        () => true,
        () => false,
      );

    it(
      'signs in the one account at the top, then Add another account moves it into accounts and appends Account 2',
      async () => {
        const page = await settingsUi.open();
        await page.signIn(HOME.code);
        expect(await page.accountMessage.textContent()).toBe(SAVED);

        await page.frame.getByRole('button', { name: 'Add another account' }).click();
        await page.frame.locator('#accounts > section').nth(1).waitFor();
        const [home, added] = [accountSection(page, 0), accountSection(page, 1)];
        expect(await page.frame.locator('#account-section').isVisible()).toBe(false);
        expect([await home.heading.textContent(), await added.heading.textContent()]).toEqual(['Account 1', 'Account 2']);
        await home.state.filter({ hasText: `Signed in as home (${HOME.email})` }).waitFor();
        await added.state.filter({ hasText: 'Not signed in' }).waitFor();
        // The new account's sign-in starts from the first one's server and country, not its e-mail.
        expect(await added.section.getByLabel('Account server', { exact: true }).inputValue()).toBe(setup().endpoints.accountUrl);
        expect(await added.section.getByLabel('E-mail', { exact: true }).inputValue()).toBe('');
        // Only in the form until a sign-in or Save: the running plugin keeps the session where it is.
        expect(await exists(join(storagePath(), 'doorbell-motion', 'session.json'))).toBe(true);
        expect((await readSavedBlock(storagePath())).accounts).toBeUndefined();
      },
      BROWSER_STEP_TIMEOUT_MS,
    );

    it(
      'signs the second account in with its own code: config.json has both accounts, each with its own doorbells listed, nothing blank',
      async () => {
        const page = settingsUi.current();
        const [home, cabin] = [accountSection(page, 0), accountSection(page, 1)];
        await cabin.signIn(CABIN.email, CABIN.code);
        await cabin.state.filter({ hasText: `Signed in as cabin (${CABIN.email})` }).waitFor();
        await cabin.doorbells.nth(1).waitFor();
        await home.doorbells.nth(1).waitFor();

        const saved = await readSavedBlock(storagePath());
        expect(Object.keys(saved).filter((key) => ['account', 'doorbellServerUrl', 'doorbellAccessToken', 'doorbells'].includes(key))).toEqual([]);
        expect(saved.accounts).toEqual([
          expect.objectContaining({ account: expect.objectContaining({ email: HOME.email }), doorbells: [expect.objectContaining({ deviceId: '1000001', name: 'Front Door' })] }),
          expect.objectContaining({ label: 'Account 2', account: expect.objectContaining({ email: CABIN.email }), doorbellServerUrl: setup().endpoints.doorbellUrl }),
        ]);
        expect(await texts(home.doorbells)).toEqual(['Front Door / Device ID 1000001 · lpd_v2 / In your settings', 'Back Door / Device ID 1000002 · lpd_v2 / Add']);
        expect(await texts(cabin.doorbells)).toEqual(['Cabin Porch / Device ID 2000001 · lpd_v2 / Add', 'Cabin Shed / Device ID 2000002 · lpd_v2 / Add']);
        expect(await exists(join(folderOf(CABIN.email), 'session.json'))).toBe(true);
      },
      BROWSER_STEP_TIMEOUT_MS,
    );

    it(
      'adds a doorbell to each account, saves, and on opening the page again both are signed in with their doorbells in the settings',
      async () => {
        const page = settingsUi.current();
        const [home, cabin] = [accountSection(page, 0), accountSection(page, 1)];
        await home.add('Back Door');
        await home.doorbells.nth(1).filter({ hasText: 'Added: press Save below' }).waitFor();
        await cabin.add('Cabin Porch');
        await cabin.doorbells.nth(0).filter({ hasText: 'Added: press Save below' }).waitFor();

        const saved = await savedBlockAfter(storagePath(), () => page.save());
        const accounts = saved.accounts as Array<{ doorbells: Array<{ deviceId: string }> }>;
        expect(accounts).toHaveLength(2);
        expect(accounts.map(({ doorbells }) => doorbells.map(({ deviceId }) => deviceId))).toEqual([['1000001', '1000002'], ['2000001']]);

        // The plugin starts with both accounts, each signed in from its own folder.
        await setup().start();
        const subscribed = (email: string) => [...(setup().simulator.account(email)?.subscribedDoorbells ?? [])].sort();
        await pollUntil(() => [subscribed(HOME.email), subscribed(CABIN.email)], ([home, cabin]) => home.length === 2 && cabin.length === 1, SUBSCRIBED_TIMEOUT_MS, 'each account subscribing its doorbells');
        expect([subscribed(HOME.email), subscribed(CABIN.email)]).toEqual([['1000001', '1000002'], ['2000001']]);

        const again = await settingsUi.open();
        const [home2, cabin2] = [accountSection(again, 0), accountSection(again, 1)];
        await cabin2.doorbells.nth(1).waitFor();
        await home2.doorbells.nth(1).waitFor();
        expect(await home2.state.textContent()).toMatch(`Signed in as home (${HOME.email})`);
        expect(await cabin2.state.textContent()).toMatch(`Signed in as cabin (${CABIN.email})`);
        expect(await texts(home2.doorbells)).toEqual(['Front Door / Device ID 1000001 · lpd_v2 / In your settings', 'Back Door / Device ID 1000002 · lpd_v2 / In your settings']);
        expect(await texts(cabin2.doorbells)).toEqual(['Cabin Porch / Device ID 2000001 · lpd_v2 / In your settings', 'Cabin Shed / Device ID 2000002 · lpd_v2 / Add']);
        // Each account's session in its own folder: the first one's moved there, with no new sign-in.
        expect(await exists(join(folderOf(HOME.email), 'session.json'))).toBe(true);
        expect(await exists(join(storagePath(), 'doorbell-motion', 'session.json'))).toBe(false);
        expect(setup().simulator.account(HOME.email)?.tokens).toHaveLength(1);
        // The Status panel: each account under its label, with its own doorbells.
        await untilPanelHolds(again, 'Cabin Porch (2000001): subscribed', FOLLOW_TIMEOUT_MS);
        expect(await panelText(again)).toMatch(/Account 1: Registered [^.]+\. Front Door \(1000001\): subscribed; no motion yet, no ring yet\. Back Door \(1000002\): subscribed; .*Account 2: Registered [^.]+\. Cabin Porch \(2000001\): subscribed/);
        await again.screenshotOwnPart('20-two-accounts');
        await copyFile(await screenshotPath('20-two-accounts'), join(REPO_ROOT, '.ci-results', 'settings-accounts.png'));
      },
      BROWSER_STEP_TIMEOUT_MS * 2 + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS,
    );

    it(
      'signs one account out while the other stays signed in: the running plugin faults only its doorbells, without a restart',
      async () => {
        const page = settingsUi.current();
        const [home, cabin] = [accountSection(page, 0), accountSection(page, 1)];
        await cabin.signOut();
        await cabin.state.filter({ hasText: 'Not signed in' }).waitFor();

        expect(await home.state.textContent()).toMatch(`Signed in as home (${HOME.email})`);
        expect(await exists(join(folderOf(CABIN.email), 'session.json'))).toBe(false);
        await untilPanelHolds(page, 'Account 2: Not signed in: sign in above to receive alerts.', FOLLOW_TIMEOUT_MS);
        expect(await panelText(page)).toContain('Front Door (1000001): subscribed');
        const accessories = await (await setup().controller()).accessories();
        const faultOf = (deviceId: string) => findBySerialNumber(accessories, deviceId).characteristic(HapService.MotionSensor, HapCharacteristic.StatusFault);
        const faults = async () => (await setup().controller()).read(faultOf('1000001'), faultOf('1000002'), faultOf('2000001'));
        await pollUntil(faults, (values) => values[2] === GENERAL_FAULT, FOLLOW_TIMEOUT_MS, "Cabin Porch's fault");
        expect(await faults()).toEqual([NO_FAULT, NO_FAULT, GENERAL_FAULT]);
        expect(setup().homebridge.lines.filter((line) => /is running on port/.test(line))).toHaveLength(1);
        const again = await settingsUi.open();
        await accountSection(again, 1).state.filter({ hasText: 'Not signed in' }).waitFor();
        await accountSection(again, 0).state.filter({ hasText: 'Signed in as home' }).waitFor();
      },
      BROWSER_STEP_TIMEOUT_MS + 2 * FOLLOW_TIMEOUT_MS,
    );

    it(
      'signs that account in again: until the running plugin follows, the Status panel says it is waiting for it under that account, then shows its doorbell subscribed',
      async () => {
        const page = settingsUi.current();
        const cabin = accountSection(page, 1);
        // The account's first code is spent: the service sends a new one.
        setup().simulator.addAccount({ email: CABIN.email, code: LATER_CODE });
        // However fast the plugin follows, the page is ahead of it for a moment: paused, it stays behind.
        await whileHomebridgePaused(setup().homebridge, async () => {
          await cabin.signIn(CABIN.email, LATER_CODE);
          await untilPanelHolds(page, 'Account 2: Signed in above: waiting for the plugin in Homebridge to follow', FOLLOW_TIMEOUT_MS);
          expect(await panelText(page)).toContain('Cabin Porch (2000001): waiting for the plugin to follow the sign-in');
          expect(await panelText(page)).toContain('Account 1: Registered');
        });
        await untilPanelHolds(page, 'Cabin Porch (2000001): subscribed', FOLLOW_TIMEOUT_MS);
        expect(await panelText(page)).not.toContain('Not signed in');
      },
      BROWSER_STEP_TIMEOUT_MS + 2 * FOLLOW_TIMEOUT_MS,
    );

    it(
      'removes an account only after asking: its entry and its folder go, the other stays signed in',
      async () => {
        const page = settingsUi.current();
        const cabin = accountSection(page, 1);
        await cabin.remove();
        await cabin.confirm.waitFor();
        expect(await cabin.confirm.textContent()).toContain('Remove Account 2?');
        // Nothing is removed before the answer.
        expect((await readSavedBlock(storagePath())).accounts).toHaveLength(2);

        await cabin.confirmed.click();
        await page.frame.locator('#accounts > section').nth(1).waitFor({ state: 'detached' });
        const saved = await readSavedBlock(storagePath());
        expect((saved.accounts as Array<{ account: { email: string } }>).map(({ account }) => account.email)).toEqual([HOME.email]);
        expect(await exists(folderOf(CABIN.email))).toBe(false);
        await accountSection(page, 0).state.filter({ hasText: 'Signed in as home' }).waitFor();
        // The last account left cannot be removed.
        expect(await page.frame.locator('#accounts [data-part="remove-account"]').isVisible()).toBe(false);
      },
      BROWSER_STEP_TIMEOUT_MS,
    );

    it('said no secret in the Homebridge UI log', () => {
      expect(linesRevealing(settingsUi.uiLines(), setup().simulator.secrets)).toEqual([]);
    });

    itEndsCleanly(setup);
  });
});
