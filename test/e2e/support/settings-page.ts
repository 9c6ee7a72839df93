/**
 * The plugin's settings page in the Homebridge UI, as a user reaches it: the Plugins page, the
 * plugin's card, its settings. The page's own part lives in an iframe; the standard settings form and
 * the Save button are the UI's, in the modal around it.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, FrameLocator, Locator, Page } from 'playwright-core';
import type { HomebridgeProcess } from '../../../scripts/lib/homebridge-process.js';
import { REPO_ROOT } from '../../../scripts/lib/paths.js';
import { errorMessage } from '../../../src/log.js';
import { launchChromium } from './browser.js';
import { CONFIG_UI_SETUP_TIMEOUT_MS, CONFIG_UI_VERSION, startConfigUi, UI_ADMIN } from '../../../scripts/lib/config-ui.js';
import { STOP_TIMEOUT_MS } from '../../../scripts/lib/homebridge-sandbox.js';
import { ACCOUNT, doorbellMotionPlatform } from './plugin-config.js';
import type { PluginSetup } from './plugin-setup.js';

/** Git-ignored; CI keeps the folder as its results. */
const SCREENSHOT_DIR = join(REPO_ROOT, '.ci-results', 'screenshots');

/** The Homebridge UI's lines a page that failed to open quotes. */
const UI_LINES_ON_FAILURE = 40;

/** Generous for a 2-core machine running Homebridge, the UI and the browser at once. */
const STEP_TIMEOUT_MS = 15_000;

/**
 * Tall enough for most of the settings modal. Chromium paints nothing of a scrolled container beyond
 * the window, so the screenshots make the window as tall as the modal first.
 */
const VIEWPORT = { width: 1280, height: 5000 };

/**
 * What an open settings page did since it opened: each request to its server (when made and
 * answered, the page's clock, in ms), and the account state and the Status panel's text after each
 * change of the page's own part, so that a line shown for a moment between two looks of a test is seen too.
 */
export interface PageRecord {
  requests: Array<{ path: string; at: number; answeredAt?: number }>;
  moments: Array<{ account: string; panel: string }>;
}

export type SettingsPage = Awaited<ReturnType<typeof openSettingsPage>>;

/**
 * Opens the plugin's settings in a session signed in to the UI; resolves once the page shows the
 * account. A page that does not get there is saved as the screenshot `failed-open`, and the error
 * says what its Account section showed and what the Homebridge UI logged last (`uiLines`).
 */
async function openSettingsPage(session: BrowserContext, baseUrl: string, uiLines: () => readonly string[]) {
  const page = await session.newPage();
  const frame = page.frameLocator('iframe[src*="/api/plugins/settings-ui/homebridge-doorbell-motion/"]');
  try {
    return await showSettings(page, frame, baseUrl);
  } catch (error) {
    const shown = await frame
      .locator('[data-part="account-state"], [data-part="account-message"]')
      .allInnerTexts()
      .catch(() => []);
    await page.screenshot({ path: await screenshotPath('failed-open'), fullPage: true }).catch(() => undefined);
    const at = page.url();
    await page.close().catch(() => undefined);
    const log = uiLines().slice(-UI_LINES_ON_FAILURE).join('\n');
    throw new Error(`${errorMessage(error)}\nAt ${at}, the Account section showed ${JSON.stringify(shown)}. The Homebridge UI's last lines:\n${log}`);
  }
}

async function showSettings(page: Page, frame: FrameLocator, baseUrl: string) {
  await page.goto(`${baseUrl}/plugins`);
  const card = page.locator('.card', { hasText: 'Doorbell Motion' }).first();
  // "Plugin Actions Dropdown" on a link up to 5.10, "Plugin Actions" on a button later.
  await card.locator('[aria-label^="Plugin Actions"]').click();
  await card.locator('button.dropdown-item', { hasText: 'Plugin Config' }).click();
  const ownPart = frame.locator('#doorbell-motion');
  const accountState = frame.locator('#account-state');
  const accountMessage = frame.locator('#account-message');
  const modal = page.locator('.modal-body');
  const dialog = page.locator('.modal-dialog').first();
  /** The inputs of the standard settings form named `name` (the last part of its key), in the order shown. */
  const formInput = (name: string): Locator => modal.locator(`input[name="${name}"]`);
  const fitWindowToModal = async () => {
    const height = Math.ceil((await dialog.boundingBox())?.height ?? 0) + 100;
    await page.setViewportSize({ width: VIEWPORT.width, height: Math.max(VIEWPORT.height, height) });
  };
  // The Account section, or with several accounts each one's copy of it: shown once the state is known.
  await frame.locator('[data-part="account-state"]:visible').filter({ hasNotText: 'Checking' }).first().waitFor();
  await formInput('name').first().waitFor();
  await startRecording(ownPart);

  return {
    page,
    frame,
    accountState,
    accountMessage,
    formInput,
    signInInput: (label: string) => frame.getByLabel(label, { exact: true }),
    /** The account's doorbells as the page lists them, one item per doorbell. */
    accountDoorbells: frame.locator('#account-doorbell-list li'),
    /** The line under the account's doorbells: why there is no list, or what an Add did. */
    accountDoorbellsMessage: frame.locator('#account-doorbells-message'),
    statusPanel: frame.getByRole('region', { name: 'Status', exact: true }),

    /** What the page did since it opened. */
    record(): Promise<PageRecord> {
      return ownPart.evaluate((element) => element.ownerDocument.defaultView.pageRecord);
    },

    /** Enters the code and signs in; resolves once the page has the answer, whatever it was. */
    async signIn(code: string): Promise<void> {
      await frame.getByLabel('Verification code', { exact: true }).fill(code);
      await frame.locator('#sign-in').click();
      await accountMessage.waitFor();
    },

    async signOut(): Promise<void> {
      await frame.locator('#sign-out').click();
      await accountState.filter({ hasText: 'Not signed in' }).waitFor();
    },

    /** Clicks a doorbell's Send test motion; resolves with what the page then says under it. */
    async sendTestMotion(doorbellName: string): Promise<string> {
      const button = frame.getByRole('button', { name: `Send test motion to ${doorbellName}` });
      const outcome = frame.locator('li', { has: button }).getByRole('status');
      await button.click();
      await outcome.waitFor();
      return (await outcome.textContent()) ?? '';
    },

    /** The values of the standard form's inputs named `name`, in the order shown. */
    formValues(name: string): Promise<string[]> {
      return formInput(name).evaluateAll((inputs) => inputs.map((input) => input.value));
    },

    /** The modal's text: the page's frame and the standard form, labels and descriptions included. */
    async formText(): Promise<string> {
      return (await modal.innerText()).replace(/\s+/g, ' ');
    },

    /** The UI's own Save: writes the form to config.json and closes the settings. */
    save(): Promise<void> {
      return page.locator('.modal-footer button.btn-primary').click();
    },

    /**
     * Saves a screenshot of the whole settings modal. A picture of the page's area, not of the element:
     * an element's screenshot first waits for it to hold still for two frames, which a busy machine
     * drawing the Status panel's 5 s updates kept it from for 15 s.
     */
    async screenshot(name: string): Promise<void> {
      await fitWindowToModal();
      const box = await dialog.boundingBox();
      if (box === null) {
        throw new Error('The settings modal is not shown');
      }
      await page.screenshot({ path: await screenshotPath(name), clip: box });
    },

    /** Saves a screenshot of the modal's top down to the end of the page's own part (above the standard form). */
    async screenshotOwnPart(name: string): Promise<void> {
      await fitWindowToModal();
      const [top, own] = await Promise.all([dialog.boundingBox(), ownPart.boundingBox()]);
      if (top === null || own === null) {
        throw new Error('The settings modal is not shown');
      }
      await page.screenshot({ path: await screenshotPath(name), clip: { ...top, height: own.y + own.height - top.y + 16 } });
    },
  };
}

/**
 * Starts the record `record()` reads, in the page. Its requests travel over the UI's websocket, not
 * as HTTP the browser would show, so the record wraps the page's `homebridge.request`.
 */
function startRecording(ownPart: Locator): Promise<void> {
  return ownPart.evaluate((element) => {
    const window = element.ownerDocument.defaultView;
    const record: PageRecord = { requests: [], moments: [] };
    const request = window.homebridge.request.bind(window.homebridge);
    window.homebridge.request = (path: string, body?: unknown) => {
      const made: PageRecord['requests'][number] = { path, at: window.performance.now() };
      record.requests.push(made);
      return request(path, body).finally(() => {
        made.answeredAt = window.performance.now();
      });
    };
    const account = window.document.getElementById('account-state');
    // The panel's section, as a user reads it: innerText leaves out what is hidden.
    const panel = window.document.getElementById('status-heading').parentElement;
    const note = () => record.moments.push({ account: account.textContent, panel: panel.innerText.replace(/\s+/g, ' ') });
    new window.MutationObserver(note).observe(element, { subtree: true, childList: true, characterData: true });
    note();
    window.pageRecord = record;
  });
}

/** Where a screenshot goes, e.g. `ui5.28.0-node22-01-not-signed-in.png`: each run of the browser tests keeps its own. */
export async function screenshotPath(name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, `ui${CONFIG_UI_VERSION}-node${process.versions.node.split('.')[0]}-${name}.png`);
}

/** What tells a browser how to offer input for a field. */
export function attributesOf(input: { getAttribute(name: string): string | null }): Record<string, string | null> {
  return { type: input.getAttribute('type'), inputmode: input.getAttribute('inputmode'), autocomplete: input.getAttribute('autocomplete') };
}

/** What the settings UI starts with, when not the standard block and a running Homebridge. */
export interface SettingsUiOptions {
  /** The plugin's platform block in config.json. */
  block?: (setup: PluginSetup) => Record<string, unknown>;
  /** Whether the setup's Homebridge is started too (the default). */
  startHomebridge?: boolean;
}

/**
 * The Homebridge UI over the setup's storage, with Chromium, for the tests of the enclosing describe:
 * config.json holds the plugin's platform with the account but no code, so the setup's Homebridge,
 * started last, runs the plugin signed out, waiting for the page. Stopped after the last test.
 */
export function useSettingsUi(setup: () => PluginSetup, options: SettingsUiOptions = {}) {
  let ui: HomebridgeProcess | undefined;
  let url: string;
  let browser: Browser | undefined;
  let session: BrowserContext;
  let settings: SettingsPage | undefined;

  beforeAll(async () => {
    const { sandbox, endpoints } = setup();
    const account = { serverUrl: endpoints.accountUrl, email: ACCOUNT.email, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode };
    ({ ui, url } = await startConfigUi(sandbox, options.block?.(setup()) ?? doorbellMotionPlatform(endpoints, { account })));
    browser = await launchChromium();
    // In the test's own time zone, which the tests' expected times are written in (TZ sets it for both).
    session = await browser.newContext({ viewport: VIEWPORT, locale: 'en-US', timezoneId: Intl.DateTimeFormat().resolvedOptions().timeZone });
    session.setDefaultTimeout(STEP_TIMEOUT_MS);
    // Signed in through the login form, as a user signs in: the UI keeps the session in localStorage
    // up to 5.10 and in a cookie later, both shared by the session's pages.
    const login = await session.newPage();
    await login.goto(`${url}/login`);
    await login.getByPlaceholder('Username').fill(UI_ADMIN.username);
    await login.getByPlaceholder('Password').fill(UI_ADMIN.password);
    await login.getByRole('button', { name: 'Continue' }).click();
    await login.waitForURL((address) => address.pathname !== '/login');
    await login.close();
    if (options.startHomebridge ?? true) {
      await setup().start();
    }
  }, CONFIG_UI_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop(STOP_TIMEOUT_MS);
  }, STOP_TIMEOUT_MS * 2);

  return {
    /** Opens the plugin's settings anew in the browser, closing the page opened before. */
    async open(): Promise<SettingsPage> {
      await settings?.page.close();
      settings = await openSettingsPage(session, url, () => ui?.lines ?? []);
      return settings;
    },
    /** The settings page opened last. */
    current(): SettingsPage {
      if (settings === undefined) {
        throw new Error('No settings page is open yet: open() one first');
      }
      return settings;
    },
    /** The Homebridge UI's output so far. */
    uiLines: (): readonly string[] => ui?.lines ?? [],
  };
}
