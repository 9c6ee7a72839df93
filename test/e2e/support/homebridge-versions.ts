/**
 * The Homebridge versions the e2e tests run against. 2.x is the devDependency. 1.x, which the
 * plugin's engines still accept, comes from the npm registry into the git-ignored `.cache/`, never
 * into the package's dependencies.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HOMEBRIDGE_2_BIN, REPO_ROOT } from '../../support/paths.js';

export const HOMEBRIDGE_1_VERSION = '1.11.4';

const HOMEBRIDGE_2_ROOT = join(REPO_ROOT, 'node_modules', 'homebridge');
const CACHE_DIR = join(REPO_ROOT, '.cache');
const HOMEBRIDGE_1_PREFIX = join(CACHE_DIR, 'homebridge-1');
const HOMEBRIDGE_1_ROOT = join(HOMEBRIDGE_1_PREFIX, 'node_modules', 'homebridge');

/** Usually 5 s from the npm cache; a cold registry fetch gets more, but not forever. */
const INSTALL_TIMEOUT_MS = 180_000;

/** For a beforeAll that asks for a runtime's binary: covers a first install of Homebridge 1. */
export const RUNTIME_SETUP_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 20_000;

const execFileAsync = promisify(execFile);

export interface HomebridgeRuntime {
  /** For test titles, e.g. "Homebridge 2.1.0". */
  readonly label: string;
  /** The path of its `bin/homebridge`, installing it first when it comes from the cache. */
  binary(): Promise<string>;
}

export const HOMEBRIDGE_RUNTIMES: readonly HomebridgeRuntime[] = [
  {
    label: `Homebridge ${readVersionSync(HOMEBRIDGE_2_ROOT)}`,
    binary: () => Promise.resolve(HOMEBRIDGE_2_BIN),
  },
  { label: `Homebridge ${HOMEBRIDGE_1_VERSION}`, binary: ensureHomebridge1 },
];

/** Installs Homebridge 1 into the cache unless the right version is there; returns its binary. */
export async function ensureHomebridge1(): Promise<string> {
  const installed = await readVersion(HOMEBRIDGE_1_ROOT);
  if (installed !== HOMEBRIDGE_1_VERSION) {
    if (installed !== undefined) {
      await rm(HOMEBRIDGE_1_PREFIX, { recursive: true, force: true });
    }
    await installHomebridge1();
  }
  return join(HOMEBRIDGE_1_ROOT, 'bin', 'homebridge');
}

/**
 * Installs into a staging folder and renames it into place, so neither a jest worker doing the same
 * nor an install cut short by the timeout leaves a half-filled cache behind.
 */
async function installHomebridge1(): Promise<void> {
  await mkdir(CACHE_DIR, { recursive: true });
  const staging = await mkdtemp(join(CACHE_DIR, 'homebridge-1-staging-'));
  try {
    const npmArgs = ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'];
    await execFileAsync('npm', [...npmArgs, `homebridge@${HOMEBRIDGE_1_VERSION}`], { timeout: INSTALL_TIMEOUT_MS });
    await rename(staging, HOMEBRIDGE_1_PREFIX).catch(async (error: unknown) => {
      const installedMeanwhile = (await readVersion(HOMEBRIDGE_1_ROOT)) === HOMEBRIDGE_1_VERSION;
      if (!installedMeanwhile) {
        throw error;
      }
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function readVersion(packageRoot: string): Promise<string | undefined> {
  try {
    return parseVersion(await readFile(join(packageRoot, 'package.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

function readVersionSync(packageRoot: string): string {
  return parseVersion(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
}

function parseVersion(packageJson: string): string {
  return (JSON.parse(packageJson) as { version: string }).version;
}
