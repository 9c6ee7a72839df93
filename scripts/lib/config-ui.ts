/**
 * The Homebridge UI (homebridge-config-ui-x) for the browser tests, run on its own as hb-service
 * would beside Homebridge: on 127.0.0.1, over a storage it shares with a Homebridge the tests start,
 * with an admin user so that no setup wizard comes first. It comes from the npm registry into the
 * git-ignored `.cache/`, next to the Homebridge 2 it ships for: the one users install today, or, for
 * the smoke run on the older Homebridge versions (`E2E_VERSIONS=older`), an older one.
 */
import { spawn } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freeLoopbackPort, HomebridgeProcess, LOOPBACK_GUARD_URL } from './homebridge-process.js';
import { REPO_ROOT } from './paths.js';
import { pollUntil } from './poll.js';
import { cachedPackageRoot, ensureCachedInstall, INSTALL_TIMEOUT_MS, type CachedInstall } from './cache-install.js';
import type { HomebridgeSandbox } from './homebridge-sandbox.js';
import { HAP_NODEJS_VERSION, HOMEBRIDGE_2_VERSION, OLDER_HOMEBRIDGE_2_VERSION, VERSION_SET } from './homebridge-versions.js';

/**
 * The Homebridge UI users install today, beside the Homebridge it ships for. It pins a
 * `@homebridge/hap-client` the registry lacks (5.2.0); 4.0.3 installs and runs.
 */
const CURRENT_UI: CachedInstall = {
  folder: 'config-ui-x-current',
  packages: ['homebridge-config-ui-x@5.28.0', `homebridge@${HOMEBRIDGE_2_VERSION}`],
  overrides: { '@homebridge/hap-client': '4.0.3', '@homebridge/hap-nodejs': HAP_NODEJS_VERSION },
};

/** An older Homebridge UI, for the smoke run on the older Homebridge versions. */
const OLDER_UI: CachedInstall = {
  folder: 'config-ui-x-older',
  packages: ['homebridge-config-ui-x@5.10.0', `homebridge@${OLDER_HOMEBRIDGE_2_VERSION}`],
};

/** Every Homebridge UI the tests install, the one users install first, for a script that fills the cache ahead of them. */
export const CONFIG_UI_INSTALLS: readonly CachedInstall[] = [CURRENT_UI, OLDER_UI];

const CONFIG_UI = VERSION_SET === 'older' ? OLDER_UI : CURRENT_UI;

/** The version of the Homebridge UI of this run, e.g. "5.28.0". */
export const CONFIG_UI_VERSION = CONFIG_UI.packages[0].split('@')[1] as string;

/** For the beforeAll that installs it: a first install from the registry takes a while. */
export const CONFIG_UI_SETUP_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 30_000;

const START_TIMEOUT_MS = 30_000;

/** It prints that it listens a moment before it answers. */
const ANSWER_TIMEOUT_MS = 10_000;

/** It shuts down gracefully within about 2 s of SIGTERM. */
const STOP_TIMEOUT_MS = 10_000;

/** The admin the tests sign in as; the UI exists only for the test's lifetime, on loopback. */
export const UI_ADMIN = { username: 'admin', password: 'e2e-admin-password' } as const;

/**
 * Starts the UI standalone over the sandbox's storage, its config.json holding `pluginBlock` and the
 * block that tells the UI where to listen; resolves with the UI, once it answers, and its address.
 */
export async function startConfigUi(sandbox: HomebridgeSandbox, pluginBlock: Record<string, unknown>): Promise<{ ui: HomebridgeProcess; url: string }> {
  const port = await freeLoopbackPort();
  await sandbox.writeConfig([pluginBlock, { platform: 'config', name: 'Config', port, host: '127.0.0.1' }]);
  // The UI's own auth.json: one admin, the password hashed as the UI hashes it (PBKDF2-SHA512).
  const salt = randomBytes(32).toString('hex');
  const hashedPassword = pbkdf2Sync(UI_ADMIN.password, salt, 1000, 64, 'sha512').toString('hex');
  const admin = { id: 1, username: UI_ADMIN.username, name: 'Administrator', hashedPassword, salt, admin: true };
  await writeFile(join(sandbox.storagePath, 'auth.json'), JSON.stringify([admin]));
  // The UI finds plugins in `-P` by their folder name; Homebridge, pointed at the repository itself, needs none.
  const pluginPath = join(sandbox.root, 'ui-plugins');
  await mkdir(pluginPath);
  await symlink(REPO_ROOT, join(pluginPath, 'homebridge-doorbell-motion'));
  // Its own HOME and TMPDIR, so that what the UI writes stays out of the plugin's checks.
  const home = join(sandbox.root, 'ui-home');

  const prefix = await ensureCachedInstall(CONFIG_UI);
  const standalone = join(cachedPackageRoot(CONFIG_UI, 'homebridge-config-ui-x'), 'dist', 'bin', 'standalone.js');
  const child = spawn(process.execPath, ['--import', LOOPBACK_GUARD_URL, standalone, '-U', sandbox.storagePath, '-P', pluginPath], {
    cwd: prefix,
    env: {
      ...process.env,
      HOME: home,
      TMPDIR: home,
      UIX_STRICT_PLUGIN_RESOLUTION: '1',
      // The UI asks the npm registry and GitHub about every plugin it lists (10 s each when the
      // network is slow). A proxy nobody listens on makes each ask fail at once and stay on this machine.
      HTTPS_PROXY: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
      NO_PROXY: '127.0.0.1,localhost',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ui = new HomebridgeProcess(child, 'Homebridge UI');
  const url = `http://127.0.0.1:${port}`;
  try {
    await ui.waitForLine(/is listening on 127\.0\.0\.1 port/, START_TIMEOUT_MS);
    const answers = async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      await response?.body?.cancel();
      return response?.ok === true;
    };
    await pollUntil(answers, Boolean, ANSWER_TIMEOUT_MS, 'The Homebridge UI answering');
  } catch (error) {
    // Nobody else holds its pid yet: a UI that never came up must not outlive the test.
    await ui.stop(STOP_TIMEOUT_MS);
    throw error;
  }
  return { ui, url };
}
