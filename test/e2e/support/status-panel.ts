/**
 * The settings page's Status panel as the tests read it: its times as the page writes them, from the
 * times status.json holds, and the requests the page makes for it.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HomebridgeProcess } from '../../../scripts/lib/homebridge-process.js';
import { DATA_FILES, dataFolderPath } from '../../../src/session/data-folder.js';
import type { DeliveryStatus } from '../../../src/status/delivery-status.js';
import { pollUntil } from '../../support/poll.js';
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

/** One request of the page to its server: which, and when it was made and answered (the page's clock, in ms). */
export interface PageRequest {
  path: string;
  at: number;
  answeredAt?: number;
}

/**
 * Records every request the open page makes to its server from now on, by wrapping the page's
 * `homebridge.request`; resolves with a function that reads the record.
 */
export async function recordRequests(settings: SettingsPage): Promise<() => Promise<PageRequest[]>> {
  const frame = settings.ownFrame;
  await frame.evaluate(() => {
    const page = globalThis as unknown as {
      homebridge: { request: (path: string, body?: unknown) => Promise<unknown> };
      recordedRequests: PageRequest[];
      unrecordedRequest?: (path: string, body?: unknown) => Promise<unknown>;
    };
    // Recording anew on the same page wraps the page's own function again, never the last wrapper.
    page.unrecordedRequest ??= page.homebridge.request.bind(page.homebridge);
    const request = page.unrecordedRequest;
    page.recordedRequests = [];
    page.homebridge.request = (path, body) => {
      const record: PageRequest = { path, at: performance.now() };
      page.recordedRequests.push(record);
      return request(path, body).finally(() => {
        record.answeredAt = performance.now();
      });
    };
  });
  return () => frame.evaluate(() => (globalThis as unknown as { recordedRequests: PageRequest[] }).recordedRequests);
}

/** How long after the answer to the page's last `path` request each ask for the status came, in ms. */
function statusAsksAfter(requests: readonly PageRequest[], path: string): number[] {
  const change = requests.filter((request) => request.path === path).at(-1);
  if (change?.answeredAt === undefined) {
    throw new Error(`The page has no answer to ${path} on record`);
  }
  const answeredAt = change.answeredAt;
  return requests.filter((request) => request.path === '/status' && request.at >= answeredAt).map((request) => request.at - answeredAt);
}

/**
 * The page's asks for the status after the answer to its last `path` request (ms after it), once the
 * record reaches `untilMs` after it.
 */
export function statusAsksAfterChange(read: () => Promise<PageRequest[]>, path: string, untilMs: number): Promise<number[]> {
  return pollUntil(
    async () => statusAsksAfter(await read(), path),
    (asks) => asks.some((at) => at >= untilMs),
    untilMs + 5_000,
    `an ask for the status ${untilMs} ms after ${path}`,
  );
}

/** What the page showed at one moment: the account state above, and the Status panel's text. */
export interface PanelMoment {
  account: string;
  panel: string;
}

/** What `recordPanel` uses of the page's elements and window (the tests are compiled without the DOM's types). */
interface PanelElement {
  textContent: string | null;
  innerText: string;
  parentElement: PanelElement | null;
}

interface PanelWindow {
  document: { getElementById(id: string): PanelElement | null };
  MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void; disconnect(): void };
  recordedPanel: PanelMoment[];
  panelObserver?: { disconnect(): void };
}

/**
 * Records the account state and the Status panel's text every time the page's own part changes,
 * from now on, so a line shown for a moment between two polls of the test is seen too. Resolves with
 * a function that reads the record.
 */
export async function recordPanel(settings: SettingsPage): Promise<() => Promise<PanelMoment[]>> {
  const frame = settings.ownFrame;
  await frame.evaluate(() => {
    const page = globalThis as unknown as PanelWindow;
    const byId = (id: string) => page.document.getElementById(id) as PanelElement;
    const [root, account] = ['doorbell-motion', 'account-state'].map(byId);
    // The panel's section, as a user sees it: innerText leaves out what is hidden.
    const panel = byId('status-heading').parentElement as PanelElement;
    page.recordedPanel = [];
    const note = () => page.recordedPanel.push({ account: account?.textContent ?? '', panel: panel.innerText.replace(/\s+/g, ' ') });
    page.panelObserver?.disconnect();
    const observer = new page.MutationObserver(note);
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    page.panelObserver = observer;
    note();
  });
  return () => frame.evaluate(() => (globalThis as unknown as PanelWindow).recordedPanel);
}
