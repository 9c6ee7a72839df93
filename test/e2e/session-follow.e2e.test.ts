/**
 * A real Homebridge 2 follows sign-ins and sign-outs that another process (here the test, as the
 * Homebridge UI's plugin server would) writes into its data folder: no restart, within 5 s.
 */
import { expect, it } from '@jest/globals';
import { SecretMaskingLogger } from '../../src/log.js';
import { openDataFolder } from '../../src/storage/data-folder.js';
import { SessionStore } from '../../src/session/session-store.js';
import { signInWithCode } from '../../src/session/sign-in.js';
import { createTestLogger } from '../../scripts/lib/homebridge-api.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';
import { START_TIMEOUT_MS } from '../../scripts/lib/homebridge-sandbox.js';
import { HOMEBRIDGE_RUNTIMES } from '../../scripts/lib/homebridge-versions.js';
import { ACCOUNT, doorbellMotionPlatform, pluginLogLine } from './support/plugin-config.js';
import { GENERAL_FAULT, itEndsCleanly, NO_FAULT, usePluginSetup } from './support/plugin-setup.js';

/** The plugin follows within 5 s; the controller's polling adds up to a fifth of a second. */
const FOLLOW_TIMEOUT_MS = 5_500;

describeWithBuiltPlugin.each(HOMEBRIDGE_RUNTIMES.slice(0, 1))('$label', (runtime) => {
  const setup = usePluginSetup(runtime, async ({ sandbox, endpoints }) => {
    const withoutCode = { serverUrl: endpoints.accountUrl, email: ACCOUNT.email, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode };
    await sandbox.writeConfig([doorbellMotionPlatform(endpoints, { account: withoutCode })]);
  });

  /** The other process's store on Homebridge's data folder. */
  function otherProcess(): SessionStore {
    const log = createTestLogger('UI');
    return new SessionStore(openDataFolder(setup().sandbox.storagePath, log), log);
  }

  it(
    'waits for a sign-in, every doorbell in fault, then registers and subscribes within 5 s of one',
    async () => {
      const homebridge = await setup().start();
      await homebridge.waitForLine(pluginLogLine('Not signed in as'), START_TIMEOUT_MS);
      expect(await setup().statusFaults()).toEqual([GENERAL_FAULT, GENERAL_FAULT, GENERAL_FAULT]);

      const store = otherProcess();
      const account = { serverUrl: setup().endpoints.accountUrl, email: ACCOUNT.email, country: ACCOUNT.country, countryCode: ACCOUNT.countryCode, majorVersion: 14, minorVersion: 0 };
      await signInWithCode(account, ACCOUNT.code, { store, log: new SecretMaskingLogger(createTestLogger('UI')) });

      await setup().waitForStatusFaults(NO_FAULT, FOLLOW_TIMEOUT_MS);
      await homebridge.waitForLine(pluginLogLine('Signed in on the settings page'), 0);
    },
    START_TIMEOUT_MS + FOLLOW_TIMEOUT_MS,
  );

  it('faults every doorbell within 5 s of a sign-out, and says it was signed out', async () => {
    await otherProcess().removeSession();

    await setup().waitForStatusFaults(GENERAL_FAULT, FOLLOW_TIMEOUT_MS);
    await setup().homebridge.waitForLine(pluginLogLine('Signed out on the settings page'), 1_000);
  });

  itEndsCleanly(setup);
});
