/**
 * Packages the e2e tests need but the plugin's package does not (the older Homebridge versions, the
 * Homebridge UIs), installed from the npm registry into a folder of the git-ignored `.cache/`, once.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';
import { REPO_ROOT } from '../../../scripts/lib/paths.js';

const CACHE_DIR = join(REPO_ROOT, '.cache');

/** Usually seconds from the npm cache; a cold registry fetch gets more, but not forever. */
export const INSTALL_TIMEOUT_MS = 180_000;

/** How often a process waiting for another's install of the same folder looks again. */
const LOCK_RETRY_MS = 1_000;

const execFileAsync = promisify(execFile);

export interface CachedInstall {
  /** The folder under `.cache/`, e.g. `homebridge-1`. */
  folder: string;
  /** What to install, as `name@version`. */
  packages: readonly [string, ...string[]];
  /** npm `overrides`: a version for a dependency deep in the tree, where the one asked for is not in the registry. */
  overrides?: Readonly<Record<string, string>>;
}

/** Written into an install's folder: what it was made from. */
const RECIPE_FILE = 'cached-install.json';

function recipeOf({ packages, overrides }: CachedInstall): string {
  return `${JSON.stringify({ packages, overrides: overrides ?? {} }, null, 2)}\n`;
}

/** Notes in `prefix` that it holds an install of exactly `install`'s packages and overrides. */
async function markInstalled(prefix: string, install: CachedInstall): Promise<void> {
  await writeFile(join(prefix, RECIPE_FILE), recipeOf(install));
}

/**
 * What `prefix` holds: `install` exactly (its packages and overrides), nothing, or something `other`
 * (other packages or overrides, or an install from before installs were noted). Any change installs anew.
 */
async function installIn(prefix: string, install: CachedInstall): Promise<'this' | 'nothing' | 'other'> {
  try {
    return (await readFile(join(prefix, RECIPE_FILE), 'utf8')) === recipeOf(install) ? 'this' : 'other';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(prefix) ? 'nothing' : 'other';
  }
}

/** The folder of an installed package inside a cached install. */
export function cachedPackageRoot(install: CachedInstall, name: string): string {
  return join(CACHE_DIR, install.folder, 'node_modules', name);
}

/**
 * Installs unless the folder holds exactly this install already; resolves with the install's prefix.
 * One process installs a folder at a time: another that needs it (a jest worker, CI's script that
 * fills the cache ahead of the tests) waits for that install instead of making its own.
 */
export async function ensureCachedInstall(install: CachedInstall): Promise<string> {
  const prefix = join(CACHE_DIR, install.folder);
  if ((await installIn(prefix, install)) === 'this') {
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
    const held = await installIn(prefix, install);
    if (held === 'other') {
      await rm(prefix, { recursive: true, force: true });
    }
    if (held !== 'this') {
      await installInto(prefix, install, async () => (await installIn(prefix, install)) === 'this');
    }
  } finally {
    await release().catch(() => undefined);
  }
  return prefix;
}

/**
 * Installs into a staging folder and renames it into place, so that an install cut short by the
 * timeout (or one made beside another after a lost lock) leaves no half-filled cache behind. Install scripts stay
 * off: nothing the tests use needs a native build.
 */
async function installInto(prefix: string, install: CachedInstall, installedMeanwhile: () => Promise<boolean>): Promise<void> {
  const { packages, overrides } = install;
  const staging = await mkdtemp(`${prefix}-staging-`);
  try {
    if (overrides !== undefined) {
      // npm reads overrides only from the package.json at the install's root.
      await writeFile(join(staging, 'package.json'), `${JSON.stringify({ private: true, overrides }, null, 2)}\n`);
    }
    const npmArgs = ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'];
    await execFileAsync('npm', [...npmArgs, ...packages], { timeout: INSTALL_TIMEOUT_MS });
    await markInstalled(staging, install);
    await rename(staging, prefix).catch(async (error: unknown) => {
      if (!(await installedMeanwhile())) {
        throw error;
      }
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
