/**
 * Packages the e2e tests need but the plugin's package does not (Homebridge 1, the newest Homebridge 2,
 * the Homebridge UI),
 * installed from the npm registry into a folder of the git-ignored `.cache/`, once.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../../scripts/lib/paths.js';

const CACHE_DIR = join(REPO_ROOT, '.cache');

/** Usually seconds from the npm cache; a cold registry fetch gets more, but not forever. */
export const INSTALL_TIMEOUT_MS = 180_000;

const execFileAsync = promisify(execFile);

export interface CachedInstall {
  /** The folder under `.cache/`, e.g. `homebridge-1`. */
  folder: string;
  /** What to install, as `name@version`; the first is the one whose version decides whether to reinstall. */
  packages: readonly [string, ...string[]];
  /** npm `overrides`: a version for a dependency deep in the tree, where the one asked for is not in the registry. */
  overrides?: Readonly<Record<string, string>>;
}

/** The folder of an installed package inside a cached install. */
export function cachedPackageRoot(install: CachedInstall, name: string): string {
  return join(CACHE_DIR, install.folder, 'node_modules', name);
}

/** Installs unless the first package is there in its version; resolves with the install's prefix. */
export async function ensureCachedInstall(install: CachedInstall): Promise<string> {
  const prefix = join(CACHE_DIR, install.folder);
  const { name, version } = splitSpec(install.packages[0]);
  const installed = await readVersion(cachedPackageRoot(install, name));
  if (installed !== version) {
    if (installed !== undefined) {
      await rm(prefix, { recursive: true, force: true });
    }
    await installInto(prefix, install, async () => (await readVersion(cachedPackageRoot(install, name))) === version);
  }
  return prefix;
}

/**
 * Installs into a staging folder and renames it into place, so neither a jest worker doing the same
 * nor an install cut short by the timeout leaves a half-filled cache behind. Install scripts stay
 * off: nothing the tests use needs a native build.
 */
async function installInto(prefix: string, { packages, overrides }: CachedInstall, installedMeanwhile: () => Promise<boolean>): Promise<void> {
  await mkdir(CACHE_DIR, { recursive: true });
  const staging = await mkdtemp(`${prefix}-staging-`);
  try {
    if (overrides !== undefined) {
      // npm reads overrides only from the package.json at the install's root.
      await writeFile(join(staging, 'package.json'), `${JSON.stringify({ private: true, overrides }, null, 2)}\n`);
    }
    const npmArgs = ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'];
    await execFileAsync('npm', [...npmArgs, ...packages], { timeout: INSTALL_TIMEOUT_MS });
    await rename(staging, prefix).catch(async (error: unknown) => {
      if (!(await installedMeanwhile())) {
        throw error;
      }
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function splitSpec(spec: string): { name: string; version: string } {
  const at = spec.lastIndexOf('@');
  return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

/** The version in a package's package.json; undefined when it is not installed. */
export async function readVersion(packageRoot: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}
