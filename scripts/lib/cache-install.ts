/**
 * Packages the e2e tests need but the plugin's package does not (the older Homebridge versions, the
 * Homebridge UIs), installed from the npm registry into a folder of the git-ignored `.cache/`, once.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';
import { REPO_ROOT } from './paths.js';

const CACHE_DIR = join(REPO_ROOT, '.cache');

/** Usually seconds from the npm cache; a cold registry fetch gets more, but not forever. */
export const INSTALL_TIMEOUT_MS = 180_000;

/** How often a process waiting for another's install of the same folder looks again. */
const LOCK_RETRY_MS = 1_000;

const execFileAsync = promisify(execFile);

/** Written into an install's folder last: what it was made from. */
const RECIPE_FILE = 'cached-install.json';

export interface CachedInstall {
  /** The folder under `.cache/`, e.g. `homebridge-1`. */
  folder: string;
  /** What to install, as `name@version`. */
  packages: readonly [string, ...string[]];
  /** npm `overrides`: a version for a dependency deep in the tree, where the one asked for is not in the registry. */
  overrides?: Readonly<Record<string, string>>;
}

/** The folder of an installed package inside a cached install. */
export function cachedPackageRoot(install: CachedInstall, name: string): string {
  return join(CACHE_DIR, install.folder, 'node_modules', name);
}

/** What an install's folder notes of what it was made from, in the file RECIPE_FILE. */
function recipeOf({ packages, overrides }: CachedInstall): string {
  return `${JSON.stringify({ packages, overrides: overrides ?? {} }, null, 2)}\n`;
}

async function holds(prefix: string, install: CachedInstall): Promise<boolean> {
  return (await readFile(join(prefix, RECIPE_FILE), 'utf8').catch(() => undefined)) === recipeOf(install);
}

/**
 * Installs unless the folder holds exactly this install already (any change of its packages or
 * overrides installs anew); resolves with the install's prefix. One process installs a folder at a
 * time: another that needs it (a jest worker, CI's script that fills the cache ahead of the tests)
 * waits for that install instead of making its own.
 */
export async function ensureCachedInstall(install: CachedInstall): Promise<string> {
  const prefix = join(CACHE_DIR, install.folder);
  if (await holds(prefix, install)) {
    return prefix;
  }
  await mkdir(CACHE_DIR, { recursive: true });
  const release = await lockfile.lock(prefix, {
    realpath: false,
    lockfilePath: `${prefix}.lock`,
    retries: { retries: INSTALL_TIMEOUT_MS / LOCK_RETRY_MS, minTimeout: LOCK_RETRY_MS, maxTimeout: LOCK_RETRY_MS },
    // The library's default throws from a timer, which would end the test run; a lost lock at worst
    // lets a second install run, which the rename below keeps harmless.
    onCompromised: () => undefined,
  });
  try {
    if (!(await holds(prefix, install))) {
      await rm(prefix, { recursive: true, force: true });
      await installInto(prefix, install);
    }
  } finally {
    await release().catch(() => undefined);
  }
  return prefix;
}

/**
 * Installs into a staging folder and renames it into place, so that an install cut short by the
 * timeout (or one made beside another after a lost lock) leaves no half-filled cache behind. Install
 * scripts stay off: nothing the tests use needs a native build.
 */
async function installInto(prefix: string, install: CachedInstall): Promise<void> {
  const staging = await mkdtemp(`${prefix}-staging-`);
  try {
    // npm reads overrides only from the package.json at the install's root.
    await writeFile(join(staging, 'package.json'), JSON.stringify({ private: true, overrides: install.overrides ?? {} }));
    const npmArgs = ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'];
    await execFileAsync('npm', [...npmArgs, ...install.packages], { timeout: INSTALL_TIMEOUT_MS });
    await writeFile(join(staging, RECIPE_FILE), recipeOf(install));
    await rename(staging, prefix).catch(async (error: unknown) => {
      if (!(await holds(prefix, install))) {
        throw error;
      }
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
