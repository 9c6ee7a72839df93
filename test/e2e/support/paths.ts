import { join } from 'node:path';
import { REPO_ROOT } from '../../../scripts/lib/paths.js';

export { HOMEBRIDGE_2_BIN, PLUGIN_ENTRY, REPO_ROOT } from '../../../scripts/lib/paths.js';

/** A stand-in plugin with a motion sensor that keeps changing (platform `E2EMotionFixture`). */
export const MOTION_FIXTURE_PLUGIN = join(REPO_ROOT, 'test', 'e2e', 'fixtures', 'homebridge-e2e-motion-fixture');
