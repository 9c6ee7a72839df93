/**
 * The Homebridge versions the e2e tests run against. The full e2e tier runs on the Homebridge users
 * install, the devDependency. The older ones the plugin's engines still accept (2.1.0, and 1.x)
 * get a smoke run of a few scenarios (the `older` jest project); they come from the npm registry into
 * the git-ignored `.cache/`, never into the package's dependencies.
 *
 * `E2E_VERSIONS=older` picks the older ones for any e2e file, as the `older` project does for its few.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOMEBRIDGE_2_BIN, REPO_ROOT } from './paths.js';
import { cachedPackageRoot, ensureCachedInstall, INSTALL_TIMEOUT_MS, type CachedInstall } from './cache-install.js';

/** What `E2E_VERSIONS` names: the versions users install (the default), or the older ones. */
export type VersionSet = 'current' | 'older';

export const VERSION_SET: VersionSet = process.env.E2E_VERSIONS === 'older' ? 'older' : 'current';

/** The devDependency's version, and the HAP-NodeJS it is installed with (its own pin is missing from the registry). */
export const HOMEBRIDGE_2_VERSION = readPackageSync(join(REPO_ROOT, 'node_modules', 'homebridge')).version;
export const HAP_NODEJS_VERSION = readPackageSync(REPO_ROOT).devDependencies?.['@homebridge/hap-nodejs'] as string;

export const HOMEBRIDGE_1_VERSION = '1.11.4';
export const OLDER_HOMEBRIDGE_2_VERSION = '2.1.0';

const HOMEBRIDGE_1: CachedInstall = { folder: 'homebridge-1', packages: [`homebridge@${HOMEBRIDGE_1_VERSION}`] };

/** With the matter.js controller of its own `@matter/main` version, so that one copy of `@matter/*` is installed. */
const OLDER_HOMEBRIDGE_2: CachedInstall = {
  folder: 'homebridge-2-older',
  packages: [`homebridge@${OLDER_HOMEBRIDGE_2_VERSION}`, '@project-chip/matter.js@0.17.1'],
};

/** Every Homebridge the older set installs, for a script that fills the cache ahead of the tests. */
export const OLDER_HOMEBRIDGE_INSTALLS: readonly CachedInstall[] = [OLDER_HOMEBRIDGE_2, HOMEBRIDGE_1];

/** For a beforeAll that asks for a runtime's binary: covers a first install into the cache. */
export const RUNTIME_SETUP_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 20_000;

export interface HomebridgeRuntime {
  /** For test titles, e.g. "Homebridge 2.4.0". */
  readonly label: string;
  /** The path of its `bin/homebridge`, installing it first when it comes from the cache. */
  binary(): Promise<string>;
}

/** A Homebridge 2 that can publish a bridge over Matter, and where a matching matter.js controller is. */
export interface MatterRuntime extends HomebridgeRuntime {
  /** A folder whose `node_modules` holds this Homebridge's `@matter/*` and `@project-chip/matter.js`. */
  matterRoot(): Promise<string>;
}

const CURRENT_HOMEBRIDGE_2: MatterRuntime = {
  label: `Homebridge ${HOMEBRIDGE_2_VERSION}`,
  binary: () => Promise.resolve(HOMEBRIDGE_2_BIN),
  matterRoot: () => Promise.resolve(REPO_ROOT),
};

const OLDER_HOMEBRIDGE_2_RUNTIME: MatterRuntime = {
  label: `Homebridge ${OLDER_HOMEBRIDGE_2_VERSION}`,
  binary: async () => {
    await ensureCachedInstall(OLDER_HOMEBRIDGE_2);
    return join(cachedPackageRoot(OLDER_HOMEBRIDGE_2, 'homebridge'), 'bin', 'homebridge.js');
  },
  matterRoot: () => ensureCachedInstall(OLDER_HOMEBRIDGE_2),
};

const HOMEBRIDGE_1_RUNTIME: HomebridgeRuntime = {
  label: `Homebridge ${HOMEBRIDGE_1_VERSION}`,
  binary: async () => {
    await ensureCachedInstall(HOMEBRIDGE_1);
    return join(cachedPackageRoot(HOMEBRIDGE_1, 'homebridge'), 'bin', 'homebridge');
  },
};

/** The runtimes of this run, a Homebridge 2 first: the devDependency, or the older ones. */
export const HOMEBRIDGE_RUNTIMES: readonly HomebridgeRuntime[] =
  VERSION_SET === 'older' ? [OLDER_HOMEBRIDGE_2_RUNTIME, HOMEBRIDGE_1_RUNTIME] : [CURRENT_HOMEBRIDGE_2];

/** Those of this run that can publish over Matter. */
export const MATTER_RUNTIMES: readonly MatterRuntime[] = HOMEBRIDGE_RUNTIMES.filter((runtime): runtime is MatterRuntime => 'matterRoot' in runtime);

/** The runtime, as one that can publish over Matter; throws for one that cannot. */
export function asMatterRuntime(runtime: HomebridgeRuntime): MatterRuntime {
  if (!('matterRoot' in runtime)) {
    throw new Error(`${runtime.label} has no Matter controller to test it with: use one of MATTER_RUNTIMES`);
  }
  return runtime as MatterRuntime;
}

function readPackageSync(packageRoot: string): { version: string; devDependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
}
