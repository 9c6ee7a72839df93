/**
 * Fills the git-ignored `.cache/` with what the e2e tests install from the npm registry (the older
 * Homebridge versions, the Homebridge UIs), all at once. The tests install what they need themselves
 * when it is missing; CI runs this first, beside the unit tests, so that no e2e test waits on npm.
 */
import { ensureCachedInstall } from '../test/e2e/support/cache-install.js';
import { CONFIG_UI_INSTALLS } from '../test/e2e/support/config-ui.js';
import { OLDER_HOMEBRIDGE_INSTALLS } from '../test/e2e/support/homebridge-versions.js';

const installs = [...CONFIG_UI_INSTALLS, ...OLDER_HOMEBRIDGE_INSTALLS];
const started = performance.now();
await Promise.all(installs.map((install) => ensureCachedInstall(install)));
console.log(`${installs.map(({ folder }) => folder).join(', ')} in .cache/, ${((performance.now() - started) / 1000).toFixed(0)} s`);
