/**
 * Signing in the way a user of the Homebridge UI does: the settings page's own server code (what
 * `/sign-in` runs) writes the session into Homebridge's storage before Homebridge starts, and the
 * plugin starts on that stored session. config.json holds the account without a code, as the page
 * leaves it.
 */
import { SettingsRequests } from '../../homebridge-ui/settings-requests.js';
import { ACCOUNT } from '../lib/platform-harness.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** `block`: the plugin's platform block as config.json holds it, its account without a code. */
export async function signInAsTheSettingsPage(storagePath: string, block: Record<string, unknown>): Promise<void> {
  const requests = new SettingsRequests({ storagePath, readPlatformBlock: async () => block, log: quiet });
  const account = block.account as Record<string, unknown>;
  await requests.signIn({ ...account, code: ACCOUNT.code });
}
