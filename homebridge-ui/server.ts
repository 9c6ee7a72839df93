import { HomebridgePluginUiServer, RequestError } from '@homebridge/plugin-ui-utils';
import type { Logger } from '#plugin/log.js';
import { readPlatformBlock } from './platform-block.js';
import { SettingsError } from './settings-error.js';
import { SettingsRequests } from './settings-requests.js';

/**
 * The settings page's server: config-ui-x forks it when the page opens. It only connects the page's
 * requests to SettingsRequests, which holds the logic and is tested without the Homebridge UI.
 */

/**
 * The Homebridge UI shows this process's stdout in its log, and stderr as errors. Request-by-request
 * debug lines would crowd it, so they stay out. Every line has passed SettingsRequests' secret mask.
 */
const uiLog: Logger = {
  debug: () => undefined,
  info: (message) => console.log(message),
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
};

class DoorbellMotionUiServer extends HomebridgePluginUiServer {
  constructor() {
    super();
    const { homebridgeStoragePath, homebridgeConfigPath } = this;
    if (homebridgeStoragePath === undefined || homebridgeConfigPath === undefined) {
      throw new Error('The Homebridge UI starts this server with HOMEBRIDGE_STORAGE_PATH and HOMEBRIDGE_CONFIG_PATH set');
    }
    const requests = new SettingsRequests({
      storagePath: homebridgeStoragePath,
      readPlatformBlock: () => readPlatformBlock(homebridgeConfigPath),
      log: uiLog,
    });
    // Each account request may name an entry of `accounts` by its own fields (see account-entry.ts).
    this.handle('/account', (body) => requests.account(body));
    this.handle('/sign-in', (body) => requests.signIn(body));
    this.handle('/sign-out', (body) => requests.signOut(body));
    this.handle('/remove-account', (body) => requests.removeAccount(body));
    this.handle('/saved-account', (body) => requests.savedAccount(body));
    this.handle('/test-motion', (body) => requests.testMotion(body));
    this.handle('/doorbells', (body) => requests.doorbells(body));
    this.handle('/status', () => requests.status());
    this.ready();
  }

  /**
   * The page gets a SettingsError's message and details as they are (the details as the rejection's
   * `error`); anything else would be a bug, never shown raw.
   */
  private handle(path: string, run: (body: unknown) => Promise<unknown>): void {
    this.onRequest(path, async (body: unknown) => {
      try {
        return await run(body);
      } catch (error) {
        if (error instanceof SettingsError) {
          throw new RequestError(error.message, error.details);
        }
        throw new RequestError('The settings page could not do that; see the Homebridge UI log.', {});
      }
    });
  }
}

new DoorbellMotionUiServer();
