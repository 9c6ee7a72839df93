/**
 * The plugin's settings page in the Homebridge UI, as a user reaches it: the Plugins page, the
 * plugin's card, its settings. The page's own part lives in an iframe; the standard settings form and
 * the Save button are the UI's, in the modal around it.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Frame, FrameLocator, Locator, Page } from 'playwright-core';
import { freeLoopbackPort, type HomebridgeProcess } from '../../../scripts/lib/homebridge-process.js';
import { REPO_ROOT } from '../../../scripts/lib/paths.js';
import { launchChromium } from './browser.js';
import { configUiPlatform, CONFIG_UI_SETUP_TIMEOUT_MS, CONFIG_UI_VERSION, startConfigUi, UI_ADMIN, uiPluginFolder, writeUiAdmin } from './config-ui.js';
import { STOP_TIMEOUT_MS } from './homebridge-sandbox.js';
import { ACCOUNT, doorbellMotionPlatform } from './plugin-config.js';
import type { PluginSetup } from './plugin-setup.js';

const PLUGIN_NAME = 'homebridge-doorbell-motion';
const DISPLAY_NAME = 'Doorbell Motion';

/** Git-ignored; CI keeps the folder as its results. */
const SCREENSHOT_DIR = join(REPO_ROOT, '.ci-results', 'screenshots');

/** Generous for a 2-core machine running Homebridge, the UI and the browser at once. */
const STEP_TIMEOUT_MS = 15_000;

/**
 * Tall enough for the whole settings modal, Advanced opened: Chromium paints nothing of a scrolled
 * container beyond the window, so a screenshot of a taller modal would end in blank.
 */
const VIEWPORT = { width: 1280, height: 5000 };

export class SettingsPage {
  private constructor(
    readonly page: Page,
    readonly frame: FrameLocator,
  ) {}

  /** Opens the plugin's settings in a session signed in to the UI; resolves once the page shows the account. */
  static async open(session: BrowserContext, baseUrl: string): Promise<SettingsPage> {
    const page = await session.newPage();
    await page.goto(`${baseUrl}/plugins`);
    const card = page.locator('.card', { hasText: DISPLAY_NAME }).first();
    // "Plugin Actions Dropdown" on a link up to 5.10, "Plugin Actions" on a button later.
    await card.locator('[aria-label^="Plugin Actions"]').click();
    await card.locator('button.dropdown-item', { hasText: 'Plugin Config' }).click();
    const settings = new SettingsPage(page, page.frameLocator(`iframe[src*="/api/plugins/settings-ui/${PLUGIN_NAME}/"]`));
    await settings.accountState.filter({ hasNotText: 'Checking' }).waitFor();
    await settings.formInput('name').waitFor();
    return settings;
  }

  /** The page's own frame, where its scripts run. */
  get ownFrame(): Frame {
    const frame = this.page.frames().find((candidate) => candidate.url().includes(`/api/plugins/settings-ui/${PLUGIN_NAME}/`));
    if (frame === undefined) {
      throw new Error("The plugin's settings page is not open");
    }
    return frame;
  }

  get accountState(): Locator {
    return this.frame.locator('#account-state');
  }

  get accountMessage(): Locator {
    return this.frame.locator('#account-message');
  }

  signInInput(label: string): Locator {
    return this.frame.getByLabel(label, { exact: true });
  }

  /** Enters the code and signs in; resolves once the page has the answer, whatever it was. */
  async signIn(code: string): Promise<void> {
    await this.signInInput('Verification code').fill(code);
    await this.frame.locator('#sign-in').click();
    await this.accountMessage.waitFor();
  }

  async signOut(): Promise<void> {
    await this.frame.locator('#sign-out').click();
    await this.accountState.filter({ hasText: 'Not signed in' }).waitFor();
  }

  /** Clicks a doorbell's Send test motion; resolves with what the page then says under it. */
  async sendTestMotion(doorbellName: string): Promise<string> {
    const button = this.frame.getByRole('button', { name: `Send test motion to ${doorbellName}` });
    const outcome = this.frame.locator('li', { has: button }).getByRole('status');
    await button.click();
    await outcome.waitFor();
    return (await outcome.textContent()) ?? '';
  }

  /** The account's doorbells as the page lists them, one text per doorbell. */
  get accountDoorbells(): Locator {
    return this.frame.locator('#account-doorbell-list li');
  }

  /** The line under the account's doorbells: why there is no list, or what an Add did. */
  get accountDoorbellsMessage(): Locator {
    return this.frame.locator('#account-doorbells-message');
  }

  /** The account doorbell's Add button. */
  addButton(doorbellName: string): Locator {
    return this.frame.getByRole('button', { name: `Add ${doorbellName}`, exact: true });
  }

  /** The Status panel: its summary lines and one line per doorbell. */
  get statusPanel(): Locator {
    return this.frame.locator('section', { has: this.frame.locator('#status-heading') });
  }

  /** The `nth` input of the standard settings form named `name` (the last part of its key). */
  formInput(name: string, nth = 0): Locator {
    return this.page.locator(`.modal-body input[name="${name}"]`).nth(nth);
  }

  /** The values of every input of the standard settings form named `name`, in the order shown. */
  formValues(name: string): Promise<string[]> {
    return this.page.locator(`.modal-body input[name="${name}"]`).evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value));
  }

  /** Whether the standard form marks each input named `name` invalid, in the order shown. */
  formInvalid(name: string): Promise<boolean[]> {
    return this.page.locator(`.modal-body input[name="${name}"]`).evaluateAll((inputs) => inputs.map((input) => input.classList.contains('ng-invalid')));
  }

  /** The input named `name` inside the standard form's fieldset titled `title`. */
  fieldsetInput(title: string, name: string): Locator {
    const fieldset = this.page.locator('.modal-body fieldset', { has: this.page.locator('legend', { hasText: title }) });
    return fieldset.locator(`input[name="${name}"]`);
  }

  /** Whether the UI marks the standard form valid: the green check beside Save, not the orange mark. */
  async formIsValid(): Promise<boolean> {
    const mark = this.page.locator('.modal-footer i.fa-circle-check, .modal-footer i.fa-circle-exclamation');
    return (await mark.getAttribute('class'))?.includes('fa-circle-check') ?? false;
  }

  /** The select of the standard settings form named `name`. */
  formSelect(name: string): Locator {
    return this.page.locator(`.modal-body select[name="${name}"]`);
  }

  /** Opens a collapsed fieldset of the standard form, such as Advanced. */
  async expandFieldset(title: string): Promise<void> {
    await this.page.locator('.modal-body legend', { hasText: title }).click();
  }

  /** The modal's text: the page's frame and the standard form, labels and descriptions included. */
  async formText(): Promise<string> {
    return (await this.page.locator('.modal-body').innerText()).replace(/\s+/g, ' ');
  }

  /**
   * Makes the Homebridge UI's own requests to save the plugin's config fail, as a server error would,
   * until the function it resolves with is called.
   */
  async failUiSaves(): Promise<() => Promise<void>> {
    const saves = '**/api/config-editor/plugin/**';
    await this.page.route(saves, (route) => (route.request().method() === 'POST' ? route.fulfill({ status: 500, body: '{}' }) : route.continue()));
    return () => this.page.unroute(saves);
  }

  /** The UI's own Save: writes the form to config.json and closes the settings. */
  async save(): Promise<void> {
    await this.page.locator('.modal-footer button.btn-primary').click();
  }

  /** Saves a screenshot of the whole settings modal as `<name>.png`, named after the UI and Node versions too. */
  async screenshot(name: string): Promise<string> {
    const path = await screenshotPath(name);
    await this.page.locator('.modal-dialog').first().screenshot({ path });
    return path;
  }

  /** Saves a screenshot of the modal's top down to the end of the page's own part (above the standard form). */
  async screenshotOwnPart(name: string): Promise<string> {
    const dialog = await this.page.locator('.modal-dialog').first().boundingBox();
    const own = await this.frame.locator('#doorbell-motion').boundingBox();
    if (dialog === null || own === null) {
      throw new Error('The settings modal is not shown');
    }
    const path = await screenshotPath(name);
    await this.page.screenshot({ path, clip: { x: dialog.x, y: dialog.y, width: dialog.width, height: own.y + own.height - dialog.y + 16 } });
    return path;
  }

  async close(): Promise<void> {
    await this.page.close();
  }
}

/** Where a screenshot goes, e.g. `ui5.28.0-node22-01-not-signed-in.png`: each run of the browser tests keeps its own. */
export async function screenshotPath(name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, `ui${CONFIG_UI_VERSION}-node${process.versions.node.split('.')[0]}-${name}.png`);
}

/**
 * A browser session signed in to the UI as its admin through the login form, as a user signs in: the
 * UI keeps the session in localStorage up to 5.10 and in a cookie later, both shared by the session's pages.
 */
async function signedInSession(browser: Browser, baseUrl: string): Promise<BrowserContext> {
  // The test's own time zone, which the tests' expected times are written in (TZ sets it for both).
  const timezoneId = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const session = await browser.newContext({ viewport: VIEWPORT, locale: 'en-US', timezoneId });
  session.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await session.newPage();
  await page.goto(`${baseUrl}/login`);
  await page.getByPlaceholder('Username').fill(UI_ADMIN.username);
  await page.getByPlaceholder('Password').fill(UI_ADMIN.password);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.pathname !== '/login');
  await page.close();
  return session;
}

/** What tells a browser how to offer input for a field. */
export function attributesOf(input: { getAttribute(name: string): string | null }): Record<string, string | null> {
  return { type: input.getAttribute('type'), inputmode: input.getAttribute('inputmode'), autocomplete: input.getAttribute('autocomplete') };
}

export interface SettingsUi {
  /** Opens the plugin's settings anew in the browser, closing the page opened before. */
  open(): Promise<SettingsPage>;
  /** The settings page opened last. */
  current(): SettingsPage;
  /** The Homebridge UI's output so far. */
  uiLines(): readonly string[];
}

/**
 * The Homebridge UI over the setup's storage, with Chromium, for the tests of the enclosing describe:
 * config.json holds the plugin's platform with the account but no code, so the setup's Homebridge,
 * started last, runs the plugin signed out, waiting for the page. Stopped after the last test.
 */
export function useSettingsUi(setup: () => PluginSetup): SettingsUi {
  let ui: HomebridgeProcess | undefined;
  let uiUrl: string;
  let browser: Browser | undefined;
  let session: BrowserContext;
  let settings: SettingsPage | undefined;

  beforeAll(async () => {
    const { sandbox, endpoints } = setup();
    const port = await freeLoopbackPort();
    const account = { serverUrl: endpoints.accountUrl, email: ACCOUNT.email, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode };
    await sandbox.writeConfig([doorbellMotionPlatform(endpoints, { account }), configUiPlatform(port)]);
    await writeUiAdmin(sandbox.storagePath);
    ui = await startConfigUi({ storagePath: sandbox.storagePath, pluginPath: await uiPluginFolder(sandbox.root), home: join(sandbox.root, 'ui-home') });
    uiUrl = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
    session = await signedInSession(browser, uiUrl);
    await setup().start();
  }, CONFIG_UI_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop(STOP_TIMEOUT_MS);
  }, STOP_TIMEOUT_MS * 2);

  return {
    open: async () => {
      await settings?.close();
      settings = await SettingsPage.open(session, uiUrl);
      return settings;
    },
    current: () => {
      if (settings === undefined) {
        throw new Error('No settings page is open yet: open() one first');
      }
      return settings;
    },
    uiLines: () => ui?.lines ?? [],
  };
}
