/**
 * What the settings page's request tests share: a fresh Homebridge storage for every test, the
 * platform block config.json would hold (changed by tests as the page's Save would), and the
 * SettingsRequests under test, logging into a recording logger with retries in milliseconds.
 */
import { afterEach, beforeEach, expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SettingsError } from '../../homebridge-ui/settings-error.js';
import { SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { PushSecretStore } from '../../src/session/push-secrets.js';
import { SessionStore } from '../../src/session/session-store.js';
import { createTestLogger, type TestLogger } from '../../scripts/lib/homebridge-api.js';

export const FAST_RETRY = { backoff: { firstMs: 1, factor: 2, maxMs: 2, jitter: true }, wait: async () => undefined };

export interface SettingsPage {
  readonly storagePath: string;
  /** The platform block of config.json; undefined: there is none. */
  block: Record<string, unknown> | undefined;
  readonly requests: SettingsRequests;
  readonly log: TestLogger;
  /** The plugin's own view of the same data folder. */
  readonly store: SessionStore;
  readonly pushSecrets: PushSecretStore;
  /** Every answer the requests gave and every message they failed with, for the secret checks. */
  readonly said: string[];
}

/** A fresh page for every test of the enclosing block; call the getter inside tests and hooks. */
export function useSettingsPage(): () => SettingsPage {
  let page: SettingsPage | undefined;
  beforeEach(async () => {
    const storagePath = await mkdtemp(join(tmpdir(), 'settings-page-'));
    const log = createTestLogger();
    const folder = openDataFolder(storagePath, log);
    const state: SettingsPage = {
      storagePath,
      block: undefined,
      log,
      store: new SessionStore(folder, log),
      pushSecrets: new PushSecretStore(folder, log),
      said: [],
      requests: new SettingsRequests({
        storagePath,
        readPlatformBlock: async () => state.block,
        log,
        retry: FAST_RETRY,
        testMotionTimeoutMs: 2_000,
      }),
    };
    page = state;
  });
  afterEach(async () => {
    if (page !== undefined) {
      await rm(page.storagePath, { recursive: true, force: true });
    }
    page = undefined;
  });
  return () => {
    if (page === undefined) {
      throw new Error('The settings page is set up in beforeEach; use it inside tests');
    }
    return page;
  };
}

/** The answer of a request, recorded in `said`. */
export async function answerOf<T>(page: SettingsPage, request: Promise<T>): Promise<T> {
  const answer = await request;
  page.said.push(JSON.stringify(answer));
  return answer;
}

/** The message a request failed with, which must be a SettingsError; recorded in `said`. */
export async function failureOf(page: SettingsPage, request: Promise<unknown>): Promise<string> {
  return (await settingsErrorOf(page, request)).message;
}

/** The SettingsError a request failed with, its message recorded in `said`. */
export async function settingsErrorOf(page: SettingsPage, request: Promise<unknown>): Promise<SettingsError> {
  const error = await request.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(SettingsError);
  const { message } = error as SettingsError;
  page.said.push(message);
  expect(message).not.toMatch(/\n\s+at /);
  return error as SettingsError;
}

/** Every line the page said or logged. */
export function everythingSaid(page: SettingsPage): string[] {
  return [...page.said, ...page.log.lines.map((line) => line.message)];
}
