/**
 * The demo folder (`.demo/` by default): Homebridge's storage for the demo, kept between runs so the
 * HomeKit pairing survives, plus `demo.json`, which exists while a demo runs and tells
 * `npm run motion` where that demo's simulator is.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { BridgeIdentity } from './homebridge-config.js';
import { accountFolderPath, DATA_FILES, dataFolderPath } from '../../src/storage/data-folder.js';
import { REPO_ROOT } from './paths.js';

const DEFAULT_DEMO_DIR = join(REPO_ROOT, '.demo');

export interface DemoDoorbell {
  deviceId: string;
  name: string;
}

/** The contents of `demo.json`. */
export interface DemoInfo {
  /** The simulator's doorbell server, which also serves the control API. */
  controlUrl: string;
  doorbells: DemoDoorbell[];
}


/** The `--dir` value as an absolute path, or the default `.demo/` of this repository. */
export function demoDir(dirFlag: string | undefined): string {
  return dirFlag === undefined ? DEFAULT_DEMO_DIR : resolve(dirFlag);
}

/** True for the default folder, which `npm start` and `npm run motion` find without `--dir`. */
export function isDefaultDemoDir(dir: string): boolean {
  return dir === DEFAULT_DEMO_DIR;
}

export function writeDemoInfo(dir: string, info: DemoInfo): Promise<void> {
  return writeFile(demoInfoPath(dir), `${JSON.stringify(info, null, 2)}\n`);
}

/** Undefined when no demo is running from this folder (or one ended without cleaning up). */
export async function readDemoInfo(dir: string): Promise<DemoInfo | undefined> {
  const info = await readJson(demoInfoPath(dir));
  return isDemoInfo(info) ? info : undefined;
}

export function removeDemoInfo(dir: string): Promise<void> {
  return rm(demoInfoPath(dir), { force: true });
}

/** The bridge identity of the previous run's config.json, if there was one. */
export async function readBridgeIdentity(dir: string): Promise<BridgeIdentity | undefined> {
  const config = await readJson(join(dir, 'config.json'));
  const bridge = isObject(config) ? config.bridge : undefined;
  if (isObject(bridge) && typeof bridge.username === 'string' && typeof bridge.pin === 'string') {
    return { username: bridge.username, pin: bridge.pin };
  }
  return undefined;
}

/**
 * Deletes the plugin's stored session, and the folders of the accounts of a run with `--accounts`.
 * Each run starts a fresh simulator, which never issued the previous run's token: reusing it would
 * end in "no longer accepts this session". An account's folder is named after its account server's
 * address, a new port every run, so the last run's are of no use either. Resolves whether there was one.
 */
export async function forgetPreviousSession(dir: string): Promise<boolean> {
  // The folder every account's own folder is in: the parent of any key's.
  const accountsFolder = dirname(accountFolderPath(dir, '000000000000'));
  const hadAccounts = existsSync(accountsFolder);
  await rm(accountsFolder, { recursive: true, force: true });
  try {
    await unlink(join(dataFolderPath(dir), DATA_FILES.session));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return hadAccounts;
    }
    throw error;
  }
}

function demoInfoPath(dir: string): string {
  return join(dir, 'demo.json');
}

/** A missing or unreadable file reads as undefined: both mean "nothing usable here". */
async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDemoInfo(value: unknown): value is DemoInfo {
  return (
    isObject(value) &&
    typeof value.controlUrl === 'string' &&
    Array.isArray(value.doorbells) &&
    value.doorbells.every((doorbell) => isObject(doorbell) && typeof doorbell.deviceId === 'string' && typeof doorbell.name === 'string')
  );
}
