/** Paths in this repository, for the demo scripts and the end-to-end tests alike. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The plugin's own folder: what Homebridge is pointed at (`-P`) to load the plugin. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The built plugin; exists once `npm run build` has run. */
export const PLUGIN_ENTRY = join(REPO_ROOT, 'dist', 'index.js');

/** `bin/homebridge.js` of the Homebridge 2 devDependency. */
export const HOMEBRIDGE_2_BIN = join(REPO_ROOT, 'node_modules', 'homebridge', 'bin', 'homebridge.js');

/** A stand-in plugin with a motion sensor that keeps changing (platform `E2EMotionFixture`). */
export const MOTION_FIXTURE_PLUGIN = join(REPO_ROOT, 'test', 'e2e', 'fixtures', 'homebridge-e2e-motion-fixture');
