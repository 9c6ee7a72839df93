/**
 * The account's doorbells and the Status panel in a real browser: a Homebridge UI over the storage of
 * a real Homebridge 2 running the built plugin against the simulator. A user who knows
 * only the e-mail and a code signs in, sees the account's doorbells, adds the one not yet set up,
 * saves, takes the restart the Homebridge UI offers, and the plugin subscribes it; a test motion shows
 * on the Status panel; once Homebridge stops, the panel says so. Then what the page says when the
 * service offers no list, refuses the configured access token, or refuses the session.
 */
import { expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import type { DeliveryStatus } from '../../src/status/delivery-status.js';
import { pollUntil } from '../../scripts/lib/poll.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { describeWithChromium } from './support/browser.js';
import { CONFIG_UI_VERSION } from '../../scripts/lib/config-ui.js';
import { findBySerialNumber, HapCharacteristic, HapService } from '../../scripts/lib/hap-client.js';
import { START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { ACCOUNT, pluginLogLine, SIDE_GATE } from './support/plugin-config.js';
import { expectStoppedInTime, itLeavesNoTrace, NO_FAULT, usePluginSetup } from './support/plugin-setup.js';
import { changeSavedBlock, readSavedBlock, savedBlockAfter } from './support/saved-config.js';
import { screenshotPath, useSettingsUi } from './support/settings-page.js';
import { panelText, panelTime, readStatus, untilPanelHolds, untilPanelShows, whileHomebridgePaused, writeStatus } from './support/status-panel.js';

const BROWSER_STEP_TIMEOUT_MS = 30_000;
const SUBSCRIBED_TIMEOUT_MS = 10_000;
const RESTART_TIMEOUT_MS = STOP_TIMEOUT_MS + START_TIMEOUT_MS + SUBSCRIBED_TIMEOUT_MS;
/** The panel asks every 5 s, and the plugin writes a change within 1 s. */
const PANEL_TIMEOUT_MS = 10_000;
const SAVED = 'Signed in. The account is saved in the settings below.';
/** The plugin follows a sign-in within 5 s and writes its status within 1 s; the page asks again then. */
const FOLLOW_TIMEOUT_MS = 8_000;
const NOT_OFFERED = "This doorbell service does not offer a list of the account's doorbells: type each doorbell's device id in the settings below.";

const MINUTE_MS = 60_000;

/** An outage as status.json keeps it: from when alerts were down to when they flowed again (null: still down). */
interface Outage {
  from: string;
  to: string | null;
  reason: string;
  /** Alerts that came too late to show. */
  late?: number;
}

/** `minutes` ago, as an ISO time. */
function minutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * MINUTE_MS).toISOString();
}

/**
 * Six outages, newest first, the first still going when `open`: the panel shows five. Their lengths
 * are whole minutes (the one going, a few seconds more), so the rounding never lands on a half.
 */
function outagesOf({ open }: { open: boolean }): Outage[] {
  const closed = (startedMinutesAgo: number, lengthMinutes: number, reason: string): Outage => ({
    from: minutesAgo(startedMinutesAgo),
    to: minutesAgo(startedMinutesAgo - lengthMinutes),
    reason,
  });
  return [
    open ? { from: new Date(Date.now() - 14 * MINUTE_MS - 10_000).toISOString(), to: null, reason: 'the relay has been unreachable' } : closed(40, 3, 'the relay has been unreachable'),
    { ...closed(180, 14, 'the session expired'), late: 1 },
    closed(400, 125, 'the push registration failed (the doorbell service is not available)'),
    closed(1_500, 2, 'the relay refused access'),
    { ...closed(1_600, 1, 'alerts came too late to show'), late: 2 },
    closed(3_000, 30, 'the configuration is invalid'),
  ];
}

/**
 * An outage as the panel writes it: "10:02 AM–10:16 AM (14 min): the session expired" (the end's
 * date only when it is not the start's), or "10:02 AM– (14 min so far): ..." while it lasts; alerts
 * that came too late to show after it follow the reason ("...; 1 alert came too late to show").
 */
function outageLine({ from, to, reason, late }: Outage, length: string): string {
  const lateWords = `${late} ${late === 1 ? 'alert' : 'alerts'} came too late to show`;
  const words = late === undefined ? reason : reason === 'alerts came too late to show' ? lateWords : `${reason}; ${lateWords}`;
  if (to === null) {
    return `${panelTime(from)}– (${length} so far): ${words}`;
  }
  const end = new Date(to).toDateString() === new Date(from).toDateString() ? panelTime(to, new Date(to)) : panelTime(to);
  return `${panelTime(from)}–${end} (${length}): ${words}`;
}

/** The Bootstrap text colour a message is shown in: `text-danger`, `text-muted`... */
async function toneOf(message: Locator): Promise<string | undefined> {
  return (await message.getAttribute('class'))?.split(' ').find((name) => name.startsWith('text-'));
}

/** Each listed doorbell as `name / details / mark or button`, as written (the UI's styles capitalise buttons). */
function texts(items: Locator): Promise<string[]> {
  return items.evaluateAll((elements) =>
    elements.map((item) => [...item.querySelectorAll(':scope > div > div, :scope > span, :scope > button')].map((part) => part.textContent?.trim()).join(' / ')),
  );
}

describeWithBuiltPlugin("the account's doorbells and the Status panel in the Homebridge UI", () => {
  describeWithChromium(`Homebridge UI ${CONFIG_UI_VERSION}, Chromium, ${HOMEBRIDGE_RUNTIMES[0].label}`, () => {
    // Relay mode, the default a user gets.
    const setup = usePluginSetup(HOMEBRIDGE_RUNTIMES[0], undefined, { delivery: 'relay' });
    const settingsUi = useSettingsUi(setup);
    const storagePath = (): string => setup().sandbox.storagePath;

    it(
      "signs in and lists the account's doorbells, digits exact and the chime left out, marking the three already set up",
      async () => {
        const page = await settingsUi.open();
        await page.statusPanel.getByText('Not signed in: sign in above to receive alerts.').waitFor();
        // Without a session the plugin closes the relay on purpose: nothing is broken.
        expect(await panelText(page)).toContain('The push relay connects once you sign in.');
        expect(await panelText(page)).not.toContain('alerts cannot arrive');
        await page.screenshotOwnPart('09-signed-out-relay');
        expect(await page.accountDoorbells.count()).toBe(0);

        await page.signIn(ACCOUNT.code);
        expect(await page.accountMessage.textContent()).toBe(SAVED);
        await page.accountDoorbells.first().waitFor();
        await page.screenshot('10-account-doorbells');
        // The panel follows the sign-in as soon as the plugin has.
        await untilPanelHolds(page, 'Front Door (1234567): subscribed', FOLLOW_TIMEOUT_MS);
        expect(await panelText(page)).not.toMatch(/Not signed in|not signed in/);

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
      const settings = settingsUi.current();
      const add = settings.frame.getByRole('button', { name: `Add ${SIDE_GATE.name}`, exact: true });
      await add.dblclick();
      await settings.accountDoorbellsMessage.getByText('Side Gate is in the settings below').waitFor();
      await settings.formInput('deviceId').nth(3).waitFor();

      expect(await settings.formValues('deviceId')).toEqual(['1234567', '42', '9007199254740993', SIDE_GATE.deviceId]);
      expect(await settings.formValues('name')).toEqual(['Doorbell Motion', 'Front Door', 'Back Door', 'Garage', SIDE_GATE.name]);
      expect((await texts(settings.accountDoorbells))[3]).toBe('Side Gate / Device ID 9007199254740995 · stickup_cam_v4 / Added: press Save below');
      expect(await add.count()).toBe(0);
    });

    it(
      'saves the id exactly, as a string, takes the restart the Homebridge UI offers, and the plugin subscribes Side Gate',
      async () => {
        const settings = settingsUi.current();
        const block = await savedBlockAfter(storagePath(), () => settings.save());
        expect(block.doorbells).toContainEqual(expect.objectContaining({ deviceId: SIDE_GATE.deviceId, name: SIDE_GATE.name }));
        expect(await readFile(join(storagePath(), 'config.json'), 'utf8')).toContain(`"deviceId": "${SIDE_GATE.deviceId}"`);

        // Beside Homebridge the Homebridge UI cannot restart it (hb-service does that): its restart
        // request restarts the setup's Homebridge instead, as hb-service would.
        let restarted: Promise<unknown> | undefined;
        await settings.page.route('**/api/server/restart', async (route) => {
          restarted ??= setup().stop().then(() => setup().start());
          await route.fulfill({ status: 200, contentType: 'application/json', body: '{"ok":true,"command":"SIGTERM","restartingUI":false}' });
        });
        const offer = settings.page.locator('.modal-content', { hasText: 'Restart Homebridge to apply the changes.' }).last();
        await offer.waitFor();
        await settings.page.screenshot({ path: await screenshotPath('11-restart-offered') });
        await offer.getByRole('button', { name: 'Restart' }).click();
        await pollUntil(() => restarted !== undefined, Boolean, BROWSER_STEP_TIMEOUT_MS, 'the restart request');
        await restarted;

        await setup().homebridge.waitForLine(pluginLogLine('4 of 4 doorbells subscribed'), SUBSCRIBED_TIMEOUT_MS);
        expect(setup().simulator.subscribedDoorbells.has(SIDE_GATE.deviceId)).toBe(true);
        const accessory = findBySerialNumber(await (await setup().controller()).accessories(), SIDE_GATE.deviceId);
        expect(accessory.name).toBe(SIDE_GATE.name);
        const fault = accessory.characteristic(HapService.MotionSensor, HapCharacteristic.StatusFault);
        await pollUntil(async () => (await (await setup().controller()).read(fault))[0], (value) => value === NO_FAULT, SUBSCRIBED_TIMEOUT_MS, 'Side Gate without a fault');
      },
      RESTART_TIMEOUT_MS + BROWSER_STEP_TIMEOUT_MS,
    );

    it(
      "shows on the Status panel how alerts arrive, each doorbell subscribed, and Side Gate's last motion after a test motion",
      async () => {
        const page = await settingsUi.open();
        await untilPanelShows(page, storagePath(), ({ relay }) => [`Receiving alerts through the relay since ${panelTime(relay?.since ?? 'never')}.`], PANEL_TIMEOUT_MS);

        expect(await page.sendTestMotion(SIDE_GATE.name)).toBe("Delivered: Side Gate's motion sensor should now show motion.");
        const status = await untilPanelShows(
          page,
          storagePath(),
          ({ doorbells, registeredAt, nextRefreshAt }) => {
            const sideGate = doorbells.find(({ deviceId }) => deviceId === SIDE_GATE.deviceId);
            return [
              `Side Gate (9007199254740995): subscribed; last motion ${panelTime(sideGate?.lastMotionAt ?? 'never')}, no ring yet.`,
              `Registered ${panelTime(registeredAt ?? 'never')}, next refresh ${panelTime(nextRefreshAt ?? 'never')}.`,
              ...['Front Door (1234567)', 'Back Door (42)', 'Garage (9007199254740993)'].map((name) => `${name}: subscribed; no motion yet, no ring yet.`),
            ];
          },
          PANEL_TIMEOUT_MS,
        );
        await page.screenshot('12-status');
        await page.screenshotOwnPart('12-status-own-part');

        // The registration is refreshed every 12 hours (from the end of an attempt to connect): half of each day the
        // next refresh falls on the next day, and the panel writes its date.
        const untilRefresh = Date.parse(status.nextRefreshAt ?? '') - Date.parse(status.registeredAt ?? '');
        expect(untilRefresh).toBeGreaterThanOrEqual(12 * 60 * 60_000);
        expect(untilRefresh).toBeLessThan(12 * 60 * 60_000 + 60_000);
        expect(await page.accountDoorbells.last().innerText()).toContain('In your settings');
      },
      BROWSER_STEP_TIMEOUT_MS + PANEL_TIMEOUT_MS,
    );

    it(
      'shows at its top whether alerts flow and, below the doorbells, the five newest outages; a status without them (an older plugin), neither',
      async () => {
        const page = settingsUi.current();
        // Whatever this plugin writes of them (a plugin that knows them does), left out here.
        const written: DeliveryStatus & { alerts?: unknown; outages?: unknown } = { ...(await readStatus(storagePath())) };
        delete written.alerts;
        delete written.outages;
        const summary = page.frame.locator('#status-summary p');
        await whileHomebridgePaused(setup().homebridge, async () => {
          // As an older plugin writes it; a ring the plugin never saw tells it from the plugin's own, and so
          // does a Chime off for a while.
          const ringAt = minutesAgo(2);
          const chimeOffUntil = minutesAgo(-30);
          const [front, ...others] = written.doorbells;
          await writeStatus(storagePath(), { ...written, updatedAt: new Date().toISOString(), doorbells: [{ ...front, lastRingAt: ringAt, chimeOffUntil }, ...others] });
          await untilPanelHolds(page, `Front Door (1234567): subscribed; no motion yet, last ring ${panelTime(ringAt)}; chime off until ${panelTime(chimeOffUntil)}.`, PANEL_TIMEOUT_MS);
          expect(await panelText(page)).not.toMatch(/Alerts|outages/);

          const stopped = outagesOf({ open: true });
          const since = minutesAgo(13);
          await writeStatus(storagePath(), {
            ...written,
            updatedAt: new Date().toISOString(),
            alerts: { flowing: false, since, reason: 'the relay has been unreachable' },
            outages: stopped,
          });
          await untilPanelHolds(page, `Alerts stopped at ${panelTime(since)}: the relay has been unreachable.`, PANEL_TIMEOUT_MS);
          await page.screenshotOwnPart('12b-alerts-stopped');
          expect(await summary.first().textContent()).toBe(`Alerts stopped at ${panelTime(since)}: the relay has been unreachable.`);
          expect(await toneOf(summary.first())).toBe('text-danger');
          expect(await page.frame.locator('#status-outage-list li').allTextContents()).toEqual(
            ['14 min', '14 min', '2 h 5 min', '2 min', '1 min'].map((length, index) => outageLine(stopped[index] as Outage, length)),
          );

          const flowing = outagesOf({ open: false });
          await writeStatus(storagePath(), {
            ...written,
            updatedAt: new Date().toISOString(),
            alerts: { flowing: true, since: flowing[0]?.to, reason: null },
            outages: flowing.slice(0, 2),
          });
          await untilPanelHolds(page, 'Alerts are flowing.', PANEL_TIMEOUT_MS);
          await page.screenshotOwnPart('12c-alerts-flowing');
          expect(await summary.first().textContent()).toBe('Alerts are flowing.');
          expect(await toneOf(summary.first())).toBe('text-success');
          // Below the doorbells, under a heading of their own.
          expect(await panelText(page)).toMatch(/\(9007199254740995\): subscribed; last motion [^;]+, no ring yet\. Recent outages /);
          expect(await page.frame.locator('#status-outage-list li').allTextContents()).toEqual([
            outageLine(flowing[0] as Outage, '3 min'),
            outageLine(flowing[1] as Outage, '14 min'),
          ]);
        });
      },
      BROWSER_STEP_TIMEOUT_MS + 3 * PANEL_TIMEOUT_MS,
    );

    it(
      'says Homebridge is not running this plugin once Homebridge has stopped',
      async () => {
        const settings = settingsUi.current();
        expectStoppedInTime(await setup().stop());

        // The panel asks every 5 s after its last answer; on a machine busy with other test runs, the
        // answer after the stop can take two rounds and more: a generous guard around that event.
        await settings.statusPanel.getByText('Homebridge is not running this plugin.').waitFor({ timeout: 2 * PANEL_TIMEOUT_MS });
        await settings.screenshot('13-not-running');
        expect(await settings.statusPanel.innerText()).not.toContain('subscribed');
        expect((await readSavedBlock(storagePath())).doorbells).toHaveLength(4);
      },
      STOP_TIMEOUT_MS + 3 * PANEL_TIMEOUT_MS,
    );

    it('says in a neutral line that the service offers no list', async () => {
      setup().simulator.setDeviceListMode('not-offered');
      const page = await settingsUi.open();
      await page.accountDoorbellsMessage.getByText(NOT_OFFERED).waitFor();

      expect(await toneOf(page.accountDoorbellsMessage)).toBe('text-muted');
      expect(await page.accountDoorbells.count()).toBe(0);
    });

    it('shows a refused doorbell access token as a problem', async () => {
      setup().simulator.setDeviceListMode('unauthorized');
      await changeSavedBlock(storagePath(), (block) => ({ ...block, doorbellAccessToken: 'refused-token-SECRET' }));
      try {
        const page = await settingsUi.open();
        await page.accountDoorbellsMessage.getByText('The doorbell service refused the Doorbell Access Token').waitFor();
        await page.screenshotOwnPart('14-token-refused');

        expect(await page.accountState.textContent()).toBe('Using a doorbell access token');
        expect(await page.accountDoorbellsMessage.textContent()).toBe(
          'The doorbell service refused the Doorbell Access Token in the settings: replace it, save, and restart Homebridge.',
        );
        expect(await toneOf(page.accountDoorbellsMessage)).toBe('text-danger');
      } finally {
        await changeSavedBlock(storagePath(), (block) => ({ ...block, doorbellAccessToken: undefined }));
      }
    });

    it("shows why, by the account state, when the service refuses the session's token", async () => {
      setup().simulator.setDeviceListMode('unauthorized');
      const page = await settingsUi.open();
      await page.accountState.filter({ hasText: 'Session expired: sign in again' }).waitFor();
      await page.accountMessage.waitFor();
      await page.screenshotOwnPart('15-session-refused');

      expect(await page.accountMessage.textContent()).toBe("The doorbell service no longer accepts this session: sign in again above to see the account's doorbells.");
      expect(await toneOf(page.accountMessage)).toBe('text-danger');
      expect(await page.frame.locator('#sign-in-form').isVisible()).toBe(true);
      expect(await page.frame.locator('#account-doorbells').isVisible()).toBe(false);
    });

    itLeavesNoTrace(setup, ['refused-token-SECRET']);
  });
});
