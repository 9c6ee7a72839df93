/**
 * The settings page's Status panel as the tests read it: its text, its times as the page writes them,
 * and the status.json it shows.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HomebridgeProcess } from '../../../scripts/lib/homebridge-process.js';
import { DATA_FILES, dataFolderPath } from '../../../src/storage/data-folder.js';
import type { DeliveryStatus } from '../../../src/status/delivery-status.js';
import { pollUntil } from '../../../scripts/lib/poll.js';
import type { SettingsPage } from './settings-page.js';

/**
 * A time as the panel writes it in the browser (locale en-US, the test's time zone): "10:02 PM" on
 * the day it is shown, "Nov 26, 12:02 AM" on any other, such as a refresh due after midnight.
 */
export function panelTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  const time = date.toLocaleTimeString('en-US', { hour: '2-digit', minute: '2-digit' });
  return date.toDateString() === now.toDateString() ? time : `${date.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })}, ${time}`;
}

/** status.json as the plugin wrote it in the setup's storage. */
export async function readStatus(storagePath: string): Promise<DeliveryStatus> {
  return JSON.parse(await readFile(join(dataFolderPath(storagePath), DATA_FILES.status), 'utf8')) as DeliveryStatus;
}

/** Replaces status.json at once, as the plugin writes it (a whole new file), with `status`. */
export async function writeStatus(storagePath: string, status: object): Promise<void> {
  const path = join(dataFolderPath(storagePath), DATA_FILES.status);
  await writeFile(`${path}.test`, JSON.stringify(status), { mode: 0o600 });
  await rename(`${path}.test`, path);
}

/**
 * Runs `step` with `homebridge` paused (SIGSTOP), as a busy host may hold it for a moment: its
 * status.json stays as it was, or as the test writes it, read as from a live process. Resumed
 * however `step` ends.
 */
export async function whileHomebridgePaused<T>(homebridge: HomebridgeProcess, step: () => Promise<T>): Promise<T> {
  const { pid } = homebridge;
  process.kill(pid, 'SIGSTOP');
  try {
    return await step();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

/** The panel's text on one line; the narrow space before AM or PM counts as a space. */
export async function panelText(settings: SettingsPage): Promise<string> {
  return (await settings.statusPanel.innerText()).replace(/\s+/g, ' ');
}

/** Waits until the panel's text holds `text`; a failed wait quotes the panel. */
export async function untilPanelHolds(settings: SettingsPage, text: string, timeoutMs: number): Promise<void> {
  await pollUntil(() => panelText(settings), (panel) => panel.includes(text), timeoutMs, `the Status panel saying "${text}"`);
}

/**
 * Waits until the panel shows every line `expected` makes of status.json as it is then: the file and
 * the page are read together, again and again, so a rewrite of the file or a new day in between only
 * costs another round. Resolves with the status the lines were made of.
 */
export async function untilPanelShows(
  settings: SettingsPage,
  storagePath: string,
  expected: (status: DeliveryStatus) => string[],
  timeoutMs: number,
): Promise<DeliveryStatus> {
  const seen = await pollUntil(
    async () => {
      const status = await readStatus(storagePath);
      return { status, lines: expected(status), panel: await panelText(settings) };
    },
    ({ lines, panel }) => lines.every((line) => panel.includes(line)),
    timeoutMs,
    'the Status panel showing status.json',
  );
  return seen.status;
}
