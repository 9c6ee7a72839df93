/**
 * The Homebridge versions the e2e tests run against. 2.x is the devDependency. 1.x, which the
 * plugin's engines still accept, and the newest 2.x, for Matter, come from the npm registry into the
 * git-ignored `.cache/`, never into the package's dependencies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOMEBRIDGE_2_BIN, REPO_ROOT } from '../../../scripts/lib/paths.js';
import { cachedPackageRoot, ensureCachedInstall, INSTALL_TIMEOUT_MS, type CachedInstall } from './cache-install.js';

export const HOMEBRIDGE_1_VERSION = '1.11.4';

const HOMEBRIDGE_2_ROOT = join(REPO_ROOT, 'node_modules', 'homebridge');
const HOMEBRIDGE_1: CachedInstall = { folder: 'homebridge-1', packages: [`homebridge@${HOMEBRIDGE_1_VERSION}`] };

/**
 * The newest Homebridge 2, with the matter.js controller of its own `@matter/main` version, so that
 * one copy of `@matter/*` is installed. It pins a `@homebridge/hap-nodejs` the registry lacks (2.2.2);
 * 2.2.3 installs and runs.
 */
export const NEWEST_HOMEBRIDGE_2_VERSION = '2.4.0';

const NEWEST_HOMEBRIDGE_2: CachedInstall = {
  folder: 'homebridge-2-newest',
  packages: [`homebridge@${NEWEST_HOMEBRIDGE_2_VERSION}`, '@project-chip/matter.js@0.17.9'],
  overrides: { '@homebridge/hap-nodejs': '2.2.3' },
};

/** For a beforeAll that asks for a runtime's binary: covers a first install of Homebridge 1. */
export const RUNTIME_SETUP_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 20_000;

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

/** A Homebridge 2 that can publish a bridge over Matter, and where a matching matter.js controller is. */
export interface MatterRuntime extends HomebridgeRuntime {
  /** A folder whose `node_modules` holds this Homebridge's `@matter/*` and `@project-chip/matter.js`. */
  matterRoot(): Promise<string>;
}

export const MATTER_RUNTIMES: readonly MatterRuntime[] = [
  { ...HOMEBRIDGE_RUNTIMES[0], matterRoot: () => Promise.resolve(REPO_ROOT) },
  {
    label: `Homebridge ${NEWEST_HOMEBRIDGE_2_VERSION}`,
    binary: async () => {
      await ensureCachedInstall(NEWEST_HOMEBRIDGE_2);
      return join(cachedPackageRoot(NEWEST_HOMEBRIDGE_2, 'homebridge'), 'bin', 'homebridge.js');
    },
    matterRoot: () => ensureCachedInstall(NEWEST_HOMEBRIDGE_2),
  },
];

/** The runtime, as one that can publish over Matter; throws for one that cannot. */
export function asMatterRuntime(runtime: HomebridgeRuntime): MatterRuntime {
  if (!('matterRoot' in runtime)) {
    throw new Error(`${runtime.label} has no Matter controller to test it with: use one of MATTER_RUNTIMES`);
  }
  return runtime as MatterRuntime;
}

/** Installs Homebridge 1 into the cache unless the right version is there; returns its binary. */
export async function ensureHomebridge1(): Promise<string> {
  await ensureCachedInstall(HOMEBRIDGE_1);
  return join(cachedPackageRoot(HOMEBRIDGE_1, 'homebridge'), 'bin', 'homebridge');
}

function readVersionSync(packageRoot: string): string {
  return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}
