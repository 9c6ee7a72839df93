/**
 * Fills the git-ignored `.cache/` with what the e2e tests install from the npm registry: the Homebridge
 * UI users install first (the e2e tier's browser tests use it), then the older Homebridge versions and
 * Homebridge UI of the smoke tier, together. The tests install what they need themselves when it is
 * missing, or wait for this script's install of it; CI runs this beside the tests, so that they seldom wait.
 */
import { ensureCachedInstall } from './lib/cache-install.js';
import { CONFIG_UI_INSTALLS } from './lib/config-ui.js';
import { OLDER_HOMEBRIDGE_INSTALLS } from './lib/homebridge-versions.js';

const [first, ...rest] = [...CONFIG_UI_INSTALLS, ...OLDER_HOMEBRIDGE_INSTALLS];
const started = performance.now();
await ensureCachedInstall(first);
await Promise.all(rest.map((install) => ensureCachedInstall(install)));
console.log(`${[first, ...rest].map(({ folder }) => folder).join(', ')} in .cache/, ${((performance.now() - started) / 1000).toFixed(0)} s`);
